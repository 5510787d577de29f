/**
 * One sweep run: fulfils attempts whose user verified but never came back (the spec: "run a periodic
 * sweep over unfinished pending records ... for users whose browser never returned").
 *
 * A run first marks attempts older than the 24 h window expired (they are never read again), then
 * claims due attempts in batches (a leased, conditional claim in the store, safe across processes),
 * reads each status with bounded concurrency, fulfils through the same fulfil path as the landing
 * (fulfil.ts; grouped commits, see group-commit.ts), and reschedules what is still pending with
 * backoff. Service errors never mark anything: the attempt is rescheduled and read again later.
 * The run's steps are in sweep-run.ts, when to read again in schedule.ts.
 *
 * Last, it delivers outcome events the onOutcome hook has not acknowledged yet (a hook that threw,
 * or a process that died between commit and delivery), leased like claims, and counts verified
 * for the SMS pumping rules the texts of fulfilled attempts whose count failed.
 *
 * Work is bounded per run (batch size, concurrency, time budget), and at most one batch is held
 * in memory at a time, so memory does not grow with the number of unfinished attempts.
 */
import { countFulfilledTexts } from '../fulfil/count-verified.ts';
import { resolveSweepOptions, type SweepOptions } from './sweep-options.ts';
import type { SweepDeps, SweepReport } from './sweep-report.ts';
import { sweepOnce } from './sweep-run.ts';
import { runBudget, untilRunEnds } from './time-budget.ts';
import { inSpan, recordSweepLag, SpanName } from '../telemetry.ts';
import { safeLogger, type KitLogger } from '../logger.ts';

/** The run's one line: what it did, and a warning when no read reached the service. */
function logRun(logger: KitLogger | undefined, report: SweepReport): void {
  const { owner, claimed, fulfilled, alreadyFulfilled, failed, pending, expired, superseded, errors } = report;
  const fields = { owner, claimed, fulfilled, alreadyFulfilled, failed, pending, expired, superseded, errors };
  const summary =
    `sweep run: ${fulfilled} fulfilled, ${failed} failed, ${pending} still pending, ${expired} expired ` +
    `(${claimed} claimed, ${report.durationMs} ms)`;
  if (report.serviceReachable) logger?.info({ ...fields, durationMs: report.durationMs }, summary);
  else logger?.warn({ ...fields, durationMs: report.durationMs }, `${summary}: no read reached the service`);
}

/**
 * Runs one sweep. Rejects only when the store itself fails (claim or expiry) or does not answer
 * within the run's time budget; then its claims lapse with the lease.
 */
export async function runSweep<Tx>(deps: SweepDeps<Tx>, options: SweepOptions = {}): Promise<SweepReport> {
  const opts = resolveSweepOptions(options, 'runSweep', deps.monotonicNow);
  return inSpan(SpanName.Sweep, { 'verify_kit.sweep.owner': opts.owner }, async (span) => {
    const startedAt = opts.monotonicNow();
    const report = await sweepOnce(deps, opts, options);
    // A user who never comes back never reads the attempt again: its lost count is made here,
    // by the end the run keeps to (a job fails a run well past it), else by a later run.
    const withinMs = untilRunEnds(startedAt, runBudget(opts.timeBudgetMs, deps.hookTimeouts), opts.monotonicNow);
    await countFulfilledTexts({ ...deps, logger: safeLogger(options.logger ?? deps.logger) }, withinMs);
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
    logRun(safeLogger(options.logger ?? deps.logger), report);
    return report;
  });
}
