/** Session state: creation, handoff redemption, OTP attempts and outcomes, all on the virtual clock. */
import { randomBytes, randomInt } from 'node:crypto';
import type { VirtualClock } from './clock.ts';
import type { Platform } from './config.ts';

export const HANDOFF_TTL_SECONDS = 120;
/** Outcomes (and idempotency keys) stay readable this long; afterwards the id reads as unknown. */
export const RETENTION_MS = 24 * 60 * 60 * 1000;
export const OTP_LENGTH = 6;
export const OTP_MAX_ATTEMPTS = 5;
export const OTP_VALIDITY_MS = 10 * 60 * 1000;

export type SessionStatus = 'pending' | 'verified' | 'failed';
export type OperationSensitivity = 'normal' | 'sensitive';

export interface SessionInput {
  clientId: string;
  returnUrl: string;
  platform: Platform;
  destination: string;
  operationSensitivity: OperationSensitivity;
  userRef: string;
  state: string;
}

export interface Session extends SessionInput {
  id: string;
  createdAt: number;
  handoff: string;
  handoffRedeemed: boolean;
  /** The browser that redeemed the handoff; only it may submit the code. */
  deviceId?: string;
  otp: string;
  otpSentAt: number;
  wrongAttempts: number;
  status: SessionStatus;
  reason?: string;
}

export type Redemption =
  | { ok: true; session: Session }
  | { ok: false; why: 'unknown' | 'already_redeemed' | 'expired' };

export function newOtp(): string {
  return randomInt(0, 10 ** OTP_LENGTH).toString().padStart(OTP_LENGTH, '0');
}

export class SessionStore {
  readonly #byId = new Map<string, Session>();
  readonly #idByHandoff = new Map<string, string>();
  readonly #clock: VirtualClock;

  constructor(clock: VirtualClock) {
    this.#clock = clock;
  }

  create(input: SessionInput): Session {
    const now = this.#clock.now();
    const session: Session = {
      ...input,
      id: `ses_${randomBytes(16).toString('base64url')}`,
      createdAt: now,
      handoff: randomBytes(32).toString('base64url'), // 256 bits
      handoffRedeemed: false,
      otp: newOtp(),
      otpSentAt: now,
      wrongAttempts: 0,
      status: 'pending',
    };
    this.#byId.set(session.id, session);
    this.#idByHandoff.set(session.handoff, session.id);
    return session;
  }

  /** The session, or undefined when unknown or older than 24 h (it then reads like an unknown id). */
  get(id: string): Session | undefined {
    const session = this.#byId.get(id);
    if (session === undefined) return undefined;
    if (this.#clock.now() - session.createdAt > RETENTION_MS) {
      this.#byId.delete(id);
      this.#idByHandoff.delete(session.handoff);
      return undefined;
    }
    return session;
  }

  /** First POST to verifyUrl wins; a second one, or one after 120 s, is refused. */
  redeemHandoff(handoff: string, deviceId: string): Redemption {
    const id = this.#idByHandoff.get(handoff);
    const session = id === undefined ? undefined : this.get(id);
    if (session === undefined) return { ok: false, why: 'unknown' };
    if (session.handoffRedeemed) return { ok: false, why: 'already_redeemed' };
    if (this.#clock.now() - session.createdAt > HANDOFF_TTL_SECONDS * 1000) return { ok: false, why: 'expired' };
    session.handoffRedeemed = true;
    session.deviceId = deviceId;
    return { ok: true, session };
  }

  /** Terminal states are final: an ended session never moves again. */
  end(session: Session, status: 'verified' | 'failed', reason?: string): void {
    if (session.status !== 'pending') return;
    session.status = status;
    if (status === 'failed') session.reason = reason;
  }

  otpExpired(session: Session): boolean {
    return this.#clock.now() - session.otpSentAt > OTP_VALIDITY_MS;
  }

  clear(): void {
    this.#byId.clear();
    this.#idByHandoff.clear();
  }
}
