/**
 * One sweep run: fulfils attempts whose user verified but never came back (the spec: "run a periodic
 * sweep over unfinished pending records ... for users whose browser never returned").
 *
 * A run first marks attempts older than the 24 h window expired (they are never read again), then
 * claims due attempts in batches (a leased, conditional claim in the store, safe across processes),
 * reads each status with bounded concurrency, fulfils through the same fulfil path as the landing
 * (fulfil.ts; grouped commits, see group-commit.ts), and reschedules what is still pending with
 * backoff. Service errors never mark anything: the attempt is rescheduled and read again later.
 * The run's steps are in sweep-run.ts.
 *
 * Last, it delivers outcome events the onOutcome hook has not acknowledged yet (a hook that threw,
 * or a process that died between commit and delivery), leased like claims.
 *
 * Work is bounded per run (batch size, concurrency, time budget), and at most one batch is held
 * in memory at a time, so memory does not grow with the number of unfinished attempts.
 */
import type { FulfilContext } from './context.ts';
import type { Attempt } from './store/types.ts';
import { DEFAULT_SWEEP_BACKOFF_MS, resolveSweepOptions, SWEEP_WINDOW_MS, type SweepOptions } from './sweep-options.ts';
import { sweepOnce } from './sweep-run.ts';
import { inSpan, recordSweepLag, SpanName } from './telemetry.ts';

/** What a run needs: the same dependencies as the landing's fulfil path. */
export type SweepDeps<Tx = unknown> = FulfilContext<Tx>;

/** What one sweep run did. */
export interface SweepReport {
  owner: string;
  /** Attempts claimed by this run. */
  claimed: number;
  /** Status reads made (each claimed attempt is read at most once per run). */
  reads: number;
  /** Attempts whose action this run performed. */
  fulfilled: number;
  /** Attempts a landing (or another worker) fulfilled between the claim and the read. */
  alreadyFulfilled: number;
  /** Attempts the service reported failed; the reason was recorded. */
  failed: number;
  /** Attempts still pending, rescheduled with backoff. */
  pending: number;
  /** Attempts marked expired (past the 24 h window; never read). */
  expired: number;
  /**
   * Verified attempts not applied because a newer attempt of the same user and action already was
   * (counted when this run found them; older pending ones settled by a fulfilment are not counted).
   */
  superseded: number;
  /** Outcome events delivered to onOutcome by this run. */
  outcomesDelivered: number;
  /** Deliveries to onOutcome that threw; those events are delivered again by a later run. */
  outcomeDeliveryErrors: number;
  /** Reads or fulfilments that failed; the attempts were rescheduled, nothing was marked. */
  errors: number;
  /** Claimed attempts not started because the run was stopped or ran out of time (released). */
  released: number;
  durationMs: number;
  /**
   * False when at least one read was made and none got a usable answer from the service
   * (every one failed as service_unavailable, service_protocol_error or service_rejected).
   */
  serviceReachable: boolean;
  /** Why the run ended before the due work was exhausted, if it did. */
  stoppedBy: 'signal' | 'time_budget' | null;
  /** How overdue the most overdue attempt this run claimed was (0 when none was due): the sweep's lag. */
  oldestDueAgeMs: number;
  /** Settled attempts whose params and destination retention removed in this run. */
  redacted: number;
  /** Settled attempts retention deleted in this run. */
  deleted: number;
}

/**
 * When to read a still-pending attempt next: `now` + the backoff for the reads made so far, but
 * never past the 24 h window. When the next read would fall outside the window, one last read is
 * placed a minute before its end; after that the attempt gets the window's end, where it is no
 * longer claimable and the next run marks it expired.
 */
export function computeNextCheckAt(
  attempt: Pick<Attempt, 'createdAt' | 'sweepChecks'>,
  now: number,
  backoffMs: readonly number[] = DEFAULT_SWEEP_BACKOFF_MS,
): number {
  // Never undefined: the default backoff is a non-empty constant.
  // eslint-disable-next-line @typescript-eslint/no-non-null-assertion
  const delay = backoffMs[Math.min(attempt.sweepChecks, backoffMs.length - 1)] ?? DEFAULT_SWEEP_BACKOFF_MS.at(-1)!;
  const windowEnd = attempt.createdAt + SWEEP_WINDOW_MS;
  const lastRead = windowEnd - 60_000;
  const next = now + delay;
  if (next <= lastRead) return next;
  return now < lastRead ? lastRead : windowEnd;
}

/** Runs one sweep. Rejects only when the store itself fails (claim or expiry). */
export async function runSweep<Tx>(deps: SweepDeps<Tx>, options: SweepOptions = {}): Promise<SweepReport> {
  const opts = resolveSweepOptions(options);
  return inSpan(SpanName.Sweep, { 'verify_kit.sweep.owner': opts.owner }, async (span) => {
    const report = await sweepOnce(deps, opts, options);
    const { claimed, fulfilled, failed, pending, expired, superseded, errors, oldestDueAgeMs } = report;
    span.setAttributes({
      'verify_kit.sweep.claimed': claimed,
      'verify_kit.sweep.fulfilled': fulfilled,
      'verify_kit.sweep.failed': failed,
      'verify_kit.sweep.pending': pending,
      'verify_kit.sweep.expired': expired,
      'verify_kit.sweep.superseded': superseded,
      'verify_kit.sweep.outcomes_delivered': report.outcomesDelivered,
      'verify_kit.sweep.outcome_delivery_errors': report.outcomeDeliveryErrors,
      'verify_kit.sweep.errors': errors,
    });
    recordSweepLag(oldestDueAgeMs);
    return report;
  });
}
