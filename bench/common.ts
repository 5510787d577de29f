/** Shared by the orchestrator and its children (no side effects on import). */
import { createHash, randomBytes } from 'node:crypto';

export interface ConfigureArgs {
  emulatorUrl: string;
  clientId: string;
  secret: string;
  returnUrl: string;
  dbPath: string;
}

export interface SeedAttempt {
  state: string;
  sessionId: string;
  userRef: string;
}

export const ACTION = 'grant';
export const SUCCESS_PATH = '/done';

/** A deterministic E.164 destination per bench user. */
export function destinationOf(userRef: string): string {
  const digits = createHash('sha256').update(userRef).digest().readUInt32BE(0) % 10_000_000;
  return `+1555${String(digits).padStart(7, '0')}`;
}

/** The kit's state format: 32 random bytes, base64url (43 characters). */
export function newState(): string {
  return randomBytes(32).toString('base64url');
}

export function basicAuthorization(clientId: string, secret: string): string {
  return `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`;
}
