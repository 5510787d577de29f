/**
 * The SMS outbox: every message is logged (the number masked) and kept, whole, for the dev inbox
 * and /_control/outbox as long as its session is (24 h on the virtual clock).
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

/**
 * "+447700900123" -> "•• 23" (a no-break space between), as the kit masks a number: a log line is
 * copied into terminals, CI output and log stores, where a full number has no place. The developer
 * reads the whole message in the dev inbox.
 */
function maskedForLog(to: string): string {
  return `••\u00a0${to.slice(-2)}`;
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
    this.#log(`SMS to ${maskedForLog(to)}: your code is ${code} (session ${sessionId})`);
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
