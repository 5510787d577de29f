/**
 * Sends whose record failed (attachSend rejected or was late): the text was counted by the check,
 * but without its record its verification could never count, so a real user's text would press on
 * the rules for good. They are kept, a bounded number per instance, and written again by later
 * starts (the only moments the counts are read), never holding one up. Once recorded, a
 * verification counts (or the sweep counts a fulfilled attempt's text: fulfil/count-verified.ts).
 */
import { withDeadline } from '../deadline.ts';
import { lateRejectionLogger } from '../logger.ts';
import type { PumpingStore } from '../store/types.ts';
import type { PumpingWriteDeps, SendRecord, UnrecordedKeeper } from './pumping-pass.ts';
import { hourOf } from './pumping-rules.ts';

/** Kept at most: past it the oldest is given up, and that is logged. */
export const MAX_UNRECORDED_SENDS = 1000;
/** Later starts write the kept sends again at most this often, a batch at a time. */
export const RECORD_AGAIN_EVERY_MS = 10_000;
const RECORD_AGAIN_BATCH = 100;
/** A send older than the daily rules' window is given up: its count no longer moves them. */
const KEPT_HOURS = 24;

export class UnrecordedSends implements UnrecordedKeeper {
  private readonly sends: SendRecord[] = [];
  private nextAt = 0;

  constructor(
    private readonly deps: PumpingWriteDeps,
    private readonly store: PumpingStore,
  ) {}

  keep(send: SendRecord): void {
    if (this.sends.length >= MAX_UNRECORDED_SENDS) {
      this.sends.shift();
      this.deps.logger.warn(
        { route: 'start', kept: MAX_UNRECORDED_SENDS },
        'an SMS pumping text whose record failed was given up (too many kept): its verification will not count',
      );
    }
    this.sends.push(send);
  }

  /** Writes kept sends again, at most every RECORD_AGAIN_EVERY_MS; one that fails again is kept. Never rejects. */
  recordAgain(now: number): void {
    if (this.sends.length === 0 || now < this.nextAt) return;
    this.nextAt = now + RECORD_AGAIN_EVERY_MS;
    const oldest = hourOf(now) - KEPT_HOURS;
    const ms = this.deps.releaseTimeoutMs;
    const late = () => new Error(`recording a send again did not settle within ${ms} ms`);
    const onLateRejection = lateRejectionLogger(this.deps.logger);
    for (const send of this.sends.splice(0, RECORD_AGAIN_BATCH)) {
      if (send.hour <= oldest) continue;
      // A late write that lands after all is harmless: a send is recorded once (attachSend).
      withDeadline('limits', ms, () => this.store.attachSend(send), { late, onLateRejection }).then(
        () => undefined,
        () => this.keep(send),
      );
    }
  }
}
