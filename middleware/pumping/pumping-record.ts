/**
 * The record of an SMS pumping decision: counted (telemetry), then stored and logged with the
 * number masked, at most PUMPING_DECISIONS_RECORDED_PER_MINUTE a minute per instance; past that it
 * is only counted (the check counted a refusal under the keys that tripped, which the rules read).
 */
import { maskDestination } from '../numbers/mask-number.ts';
import { countPumpingDecision } from '../telemetry.ts';
import type { PumpingDecisionRecord, PumpingStore } from '../store/types.ts';
import type { StartKeys } from './pumping-keys.ts';
import { writeWithin, type PumpingWriteDeps } from './pumping-pass.ts';

/**
 * Decisions stored and logged per minute per instance. A refusal spends no text, so without a
 * bound an attacker could grow the decisions table and the logs as fast as it can post; past it a
 * decision is only counted (telemetry; the check counted a refusal under its keys).
 */
export const PUMPING_DECISIONS_RECORDED_PER_MINUTE = 60;
const MINUTE_MS = 60_000;

type Decision = PumpingDecisionRecord['decision'];

/**
 * The bound on what decisions write, by the kit's clock: a fixed number of fields, whatever the
 * traffic. A minute that left decisions unwritten is told in one log line at the next start.
 */
export class DecisionBound {
  private minute = Number.NEGATIVE_INFINITY;
  private written = 0;
  private unwritten: Record<Decision, number> = { warned: 0, refused: 0, challenged: 0 };

  constructor(private readonly deps: PumpingWriteDeps) {}

  /** Logs the last minute's unwritten decisions once a new minute has begun. */
  turn(now: number): void {
    const minute = Math.floor(now / MINUTE_MS);
    if (minute === this.minute) return;
    const { unwritten } = this;
    const total = unwritten.warned + unwritten.refused + unwritten.challenged;
    if (total > 0) {
      this.deps.logger.warn(
        { route: 'start', pumping: 'unrecorded', unrecorded: { ...unwritten }, minute: this.minute * MINUTE_MS },
        `${total} SMS pumping decisions of the minute from ${new Date(this.minute * MINUTE_MS).toISOString()} were counted but not stored or logged (at most ${PUMPING_DECISIONS_RECORDED_PER_MINUTE} a minute are)`,
      );
    }
    this.minute = minute;
    this.written = 0;
    this.unwritten = { warned: 0, refused: 0, challenged: 0 };
  }

  /** True when this decision is stored and logged; false when the minute's bound is reached (it is counted as unwritten). */
  take(decision: Decision, now: number): boolean {
    this.turn(now);
    if (this.written < PUMPING_DECISIONS_RECORDED_PER_MINUTE) {
      this.written += 1;
      return true;
    }
    this.unwritten[decision] += 1;
    return false;
  }
}

/**
 * Counted, then stored and logged (the number masked) within the bound; a store that fails here
 * never fails the start.
 */
export async function record(
  deps: PumpingWriteDeps,
  store: PumpingStore,
  bound: DecisionBound,
  start: StartKeys,
  destination: string,
  decision: Decision,
  reasons: string[],
): Promise<void> {
  const { country, block, address, userRef } = start;
  countPumpingDecision(decision, reasons, country);
  const decidedAt = deps.now();
  if (!bound.take(decision, decidedAt)) return;
  deps.logger.warn(
    { route: 'start', pumping: decision, reasons, country, destination: maskDestination(destination) },
    // Let through, not sent: the start budgets, the app's hook or the service may still refuse it.
    decision === 'refused'
      ? 'start refused: it matches SMS pumping (texts never verified); nothing was sent'
      : `start let through by the SMS pumping rules${decision === 'warned' ? '' : ' after the challenge'} although it matches SMS pumping (texts never verified)`,
  );
  const recorded = { decidedAt, decision, reasons, country, block, address, userRef };
  await writeWithin(
    deps,
    'recording the decision',
    () => store.recordDecision(recorded),
    'could not record an SMS pumping decision',
  );
}
