/** The SMS outbox: every message is logged on the console and kept for the dev inbox and /_control/outbox. */
import type { TestClock } from '../clock.ts';

export interface SmsMessage {
  to: string;
  code: string;
  sessionId: string;
  /** ISO time on the virtual clock. */
  sentAt: string;
}

export class Outbox {
  readonly #messages: SmsMessage[] = [];
  readonly #clock: TestClock;
  readonly #log: (line: string) => void;

  constructor(clock: TestClock, log: (line: string) => void) {
    this.#clock = clock;
    this.#log = log;
  }

  send(to: string, code: string, sessionId: string): SmsMessage {
    const message = { to, code, sessionId, sentAt: new Date(this.#clock.now()).toISOString() };
    this.#messages.push(message);
    this.#log(`SMS to ${to}: your code is ${code} (session ${sessionId})`);
    return message;
  }

  /** Oldest first. */
  list(): readonly SmsMessage[] {
    return this.#messages;
  }

  clear(): void {
    this.#messages.length = 0;
  }
}
