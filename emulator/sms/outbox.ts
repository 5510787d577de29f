/**
 * The SMS outbox: every message is logged on the console and kept for the dev inbox and
 * /_control/outbox as long as its session is (24 h on the virtual clock).
 */
import { RETENTION_MS } from '../api/sessions.ts';
import type { TestClock } from '../clock.ts';

export interface SmsMessage {
  to: string;
  code: string;
  sessionId: string;
  /** ISO time on the virtual clock. */
  sentAt: string;
}

export class Outbox {
  /** Oldest first, each with its send time in ms. */
  readonly #messages: SmsMessage[] = [];
  readonly #sentAtMs: number[] = [];
  readonly #clock: TestClock;
  readonly #log: (line: string) => void;

  constructor(clock: TestClock, log: (line: string) => void) {
    this.#clock = clock;
    this.#log = log;
  }

  send(to: string, code: string, sessionId: string): SmsMessage {
    const now = this.#clock.now();
    this.#forgetExpired(now);
    const message = { to, code, sessionId, sentAt: new Date(now).toISOString() };
    this.#messages.push(message);
    this.#sentAtMs.push(now);
    this.#log(`SMS to ${to}: your code is ${code} (session ${sessionId})`);
    return message;
  }

  /** Oldest first. */
  list(): readonly SmsMessage[] {
    return this.#messages;
  }

  /** Messages older than their session are dropped, so a long-running emulator's inbox stays a day long. */
  #forgetExpired(now: number): void {
    let expired = 0;
    while (expired < this.#sentAtMs.length && now - (this.#sentAtMs[expired] ?? now) > RETENTION_MS) expired++;
    if (expired === 0) return;
    this.#messages.splice(0, expired);
    this.#sentAtMs.splice(0, expired);
  }

  clear(): void {
    this.#messages.length = 0;
    this.#sentAtMs.length = 0;
  }
}
