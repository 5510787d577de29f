/**
 * The attempt's `state`: made here for every attempt (a fresh one each time, from node:crypto)
 * and recognised here when it comes back. It is an identifier, never evidence.
 */
import { randomBytes } from 'node:crypto';

/** The kit's states: 32 random bytes, base64url without padding. */
export const STATE_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** 32 bytes from node:crypto, base64url: 43 characters, 256 bits. */
export function newState(): string {
  return randomBytes(32).toString('base64url');
}

/** True for a string shaped like a state this kit makes. */
export function isStateShaped(value: unknown): value is string {
  return typeof value === 'string' && STATE_PATTERN.test(value);
}
