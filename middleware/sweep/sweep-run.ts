/**
 * The steps of one sweep run, in order: expire what left the 24 h window, apply retention, then
 * claim due attempts batch by batch and check each one (read its status, then fulfil, record the
 * failure or reschedule), release what was claimed but not started, deliver outcome events, report.
 *
 * A check's read and its write are split: the worker that read a verified status hands the
 * fulfilment to the run's group committer and starts its next read at once, so `concurrency`
 * reads stay in flight while fulfilments that became ready together share one commit
 * (fulfil/group-commit.ts). Fulfilments waiting for their commit are bounded by the batch size.
 *
 * What the steps share is sweep-run-state.ts; the claims, reschedules and release are
 * sweep-run-claims.ts; the reads and what they find, sweep-run-checks.ts.
 */
import { deliverOutcomeEvents } from '../fulfil/outcomes.ts';
import { countOutcomes } from '../telemetry.ts';
import { applyRetention, stepUpPurgeMs, warnOfNoGrantPurge } from './retention.ts';
import { SWEEP_WINDOW_MS, type ResolvedSweepOptions, type SweepOptions } from './sweep-options.ts';
import type { SweepDeps, SweepReport } from './sweep-report.ts';
import { checkDueAttempts } from './sweep-run-checks.ts';
import { releaseUnstarted, writeReschedules } from './sweep-run-claims.ts';
import { startRun, type Run } from './sweep-run-state.ts';
import { deliveryStop } from './time-budget.ts';

/**
 * Runs one sweep's steps. Rejects only when the store itself fails (claim or expiry) or does not
 * answer within the run's time budget (time-budget.ts, storeWithinBudget).
 */
export async function sweepOnce<Tx>(
  deps: SweepDeps<Tx>,
  opts: ResolvedSweepOptions,
  options: SweepOptions,
): Promise<SweepReport> {
  const run = startRun(deps, opts, options);
  await expireOutsideWindow(run);
  // The step-up purges are housekeeping: one that hangs is given up on its own, never the run's store.
  const purges = { stepUp: deps.store.stepUp, timeoutMs: stepUpPurgeMs(opts.timeBudgetMs) };
  Object.assign(run.report, await applyRetention(run.deps.store, deps.now(), opts.retention, run.logger, purges));
  if (run.report.grantsPurgeSkipped) warnOfNoGrantPurge(deps.store, run.logger);
  try {
    await checkDueAttempts(run);
  } finally {
    // Every read is done: the last group need not wait out its gathering window.
    run.readsCutOff.end();
    run.committer.flush();
    await Promise.all(run.applying);
    // A batch claimed ahead and not started is released with the rest.
    await run.claiming?.catch(() => undefined);
    await writeReschedules(run);
    await releaseUnstarted(run);
  }
  if (run.tooOld > 0) await expireOutsideWindow(run);
  await deliverOutcomes(run);
  return finishReport(run);
}

/** Marks pending attempts past the 24 h window expired; they are never read again. */
async function expireOutsideWindow<Tx>(run: Run<Tx>): Promise<void> {
  const expired = await run.deps.store.expireAttempts(run.deps.now(), SWEEP_WINDOW_MS, run.event);
  countOutcomes(expired, 'expired', 'sweep');
  run.report.expired += expired;
}

/** At least once: whatever onOutcome has not acknowledged (this run's outcomes included). */
async function deliverOutcomes<Tx>(run: Run<Tx>): Promise<void> {
  const delivery = await deliverOutcomeEvents(run.deps, {
    owner: run.opts.owner,
    leaseMs: run.opts.leaseMs,
    limit: run.opts.batchSize,
    // Within every run, one that stopped reading on its budget included: at least a batch, in the time kept for it.
    shouldStop: deliveryStop(run.startedAt + run.opts.timeBudgetMs, run.signal, run.clock),
  });
  run.report.outcomesDelivered = delivery.delivered;
  run.report.outcomeDeliveryErrors = delivery.failed;
}

function finishReport<Tx>(run: Run<Tx>): SweepReport {
  const { report } = run;
  report.serviceReachable = run.answers.reachable(report.reads);
  report.durationMs = Math.round(run.clock() - run.startedAt);
  return report;
}
