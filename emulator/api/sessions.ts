/** Session state: creation, handoff redemption, OTP attempts and outcomes, all on the virtual clock. */
import { randomBytes, randomInt } from 'node:crypto';
import type { TestClock } from '../clock.ts';
import type { Platform } from '../config/config.ts';

export const HANDOFF_TTL_SECONDS = 120;
/** Outcomes (and idempotency keys) stay readable this long; afterwards the id reads as unknown. */
export const RETENTION_MS = 24 * 60 * 60 * 1000;
export const OTP_LENGTH = 6;
export const OTP_MAX_ATTEMPTS = 5;
export const OTP_VALIDITY_MS = 10 * 60 * 1000;
/** A passkey page's challenge answers one ceremony, within this time. */
export const PASSKEY_CHALLENGE_TTL_MS = 5 * 60 * 1000;

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
  /** Undefined while the SMS is deferred (a passkey user who has not asked for a code). */
  otpSentAt: number | undefined;
  /** The create call's Idempotency-Key, so a deferred SMS is still counted under it. */
  idempotencyKey?: string;
  wrongAttempts: number;
  status: SessionStatus;
  reason?: string;
  verifiedBy?: 'sms' | 'passkey';
  /** The one WebAuthn challenge this session's page may answer; cleared when used (single use). */
  passkeyChallenge?: PasskeyChallenge;
  /** A tampered echo set through the control API: status reads answer these instead (tests only). */
  echo?: { state?: string; userRef?: string };
}

export interface PasskeyChallenge {
  value: string;
  purpose: 'enrol' | 'verify';
  issuedAt: number;
}

export type Redemption =
  { ok: true; session: Session } | { ok: false; why: 'unknown' | 'already_redeemed' | 'expired' };

export function newOtp(): string {
  return randomInt(0, 10 ** OTP_LENGTH)
    .toString()
    .padStart(OTP_LENGTH, '0');
}

export class SessionStore {
  readonly #byId = new Map<string, Session>();
  readonly #idByHandoff = new Map<string, string>();
  readonly #clock: TestClock;

  /** The session a handoff was issued for, redeemed or not (control API only). */
  byHandoff(handoff: string): Session | undefined {
    const id = this.#idByHandoff.get(handoff);
    return id === undefined ? undefined : this.get(id);
  }

  constructor(clock: TestClock) {
    this.#clock = clock;
  }

  create(input: SessionInput): Session {
    const now = this.#clock.now();
    this.#forgetExpired(now);
    const session: Session = {
      ...input,
      id: `ses_${randomBytes(16).toString('base64url')}`,
      createdAt: now,
      handoff: randomBytes(32).toString('base64url'), // 256 bits
      handoffRedeemed: false,
      otp: newOtp(),
      otpSentAt: undefined, // sendOtpOnce (sms.ts) sends it and sets the time
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
      this.#forget(session);
      return undefined;
    }
    return session;
  }

  /** Sessions held, expired ones not yet forgotten included. */
  get size(): number {
    return this.#byId.size;
  }

  /**
   * Forgets the sessions past 24 h, oldest first (the map keeps creation order), so a long-running
   * emulator holds about a day of sessions rather than every one it ever created.
   */
  #forgetExpired(now: number): void {
    for (const session of this.#byId.values()) {
      if (now - session.createdAt <= RETENTION_MS) return;
      this.#forget(session);
    }
  }

  #forget(session: Session): void {
    this.#byId.delete(session.id);
    this.#idByHandoff.delete(session.handoff);
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
  end(session: Session, status: 'verified' | 'failed', reason?: string, verifiedBy?: 'sms' | 'passkey'): void {
    if (session.status !== 'pending') return;
    session.status = status;
    session.passkeyChallenge = undefined;
    if (status === 'failed') session.reason = reason;
    else session.verifiedBy = verifiedBy;
  }

  /** Control API only: an ended session moved to another end, a move the interface leaves open. */
  moveEnded(session: Session, status: 'verified' | 'failed', reason?: string): void {
    session.status = status;
    session.reason = status === 'failed' ? reason : undefined;
    session.passkeyChallenge = undefined;
  }

  otpExpired(session: Session): boolean {
    return session.otpSentAt !== undefined && this.#clock.now() - session.otpSentAt > OTP_VALIDITY_MS;
  }

  /** A fresh challenge for the page about to be shown; it replaces any earlier one of the session. */
  issueChallenge(session: Session, purpose: PasskeyChallenge['purpose'], value: string): void {
    session.passkeyChallenge = { value, purpose, issuedAt: this.#clock.now() };
  }

  /** The session's challenge for `purpose` if still valid, and either way it is gone: single use. */
  takeChallenge(session: Session, purpose: PasskeyChallenge['purpose']): string | undefined {
    const challenge = session.passkeyChallenge;
    session.passkeyChallenge = undefined;
    if (challenge === undefined || challenge.purpose !== purpose) return undefined;
    return this.#clock.now() - challenge.issuedAt > PASSKEY_CHALLENGE_TTL_MS ? undefined : challenge.value;
  }

  clear(): void {
    this.#byId.clear();
    this.#idByHandoff.clear();
  }
}
