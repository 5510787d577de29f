/**
 * A sweep run's claimed attempts: the next one to check (claiming the next batch ahead), a lease
 * running out, the reschedules written a batch at a time, and the release of what was not started.
 */
import { describeError as describe } from '../logger.ts';
import type { Attempt } from '../store/types.ts';
import { SWEEP_WINDOW_MS } from './sweep-options.ts';
import type { SweepReport } from './sweep-report.ts';
import type { Run } from './sweep-run-state.ts';

/** Why the run starts no more reads, or null while it may. */
function stopReason<Tx>(run: Run<Tx>): SweepReport['stoppedBy'] {
  if (run.report.stoppedBy !== null) return run.report.stoppedBy;
  if (run.signal?.aborted === true) return 'signal';
  if (run.clock() >= run.readsEndAt) return 'time_budget';
  if (run.answers.nothingAnswers()) return 'service_unreachable';
  return null;
}

/**
 * The next attempt to check; undefined when the run is done; a promise of either only while the
 * worker must wait for a claim. The next batch is claimed while half of this one (at least
 * `concurrency` attempts) is still to be read: on a busy database a claim's round trip takes as
 * long as several reads, and no worker should wait for it.
 */
export function take<Tx>(run: Run<Tx>): Attempt | undefined | Promise<Attempt | undefined> {
  const claimWhenLeft = Math.max(run.opts.concurrency, Math.ceil(run.opts.batchSize / 2));
  for (;;) {
    const reason = stopReason(run);
    if (reason !== null) {
      run.report.stoppedBy = reason;
      return undefined;
    }
    const next = run.claimed.pop();
    if (run.claimed.length < claimWhenLeft) claimAhead(run);
    if (next !== undefined && leaseRunningOut(run, next)) continue;
    if (next !== undefined) return next;
    if (run.claiming === undefined) return undefined;
    return run.claiming.then(() => take(run));
  }
}

/** Starts claiming the next batch unless one is being claimed or none is left. */
function claimAhead<Tx>(run: Run<Tx>): void {
  if (run.exhausted || run.claiming !== undefined) return;
  const claiming = claimBatch(run).finally(() => {
    run.claiming = undefined;
  });
  // A failed claim rejects the worker that waits for it (take); until then it is not unhandled.
  claiming.catch(() => undefined);
  run.claiming = claiming;
}

/** Claims (leases) the next batch of due attempts, most overdue first. */
async function claimBatch<Tx>(run: Run<Tx>): Promise<void> {
  const { deps, opts, report } = run;
  // Pending reschedules are leased by this run, so the claim cannot take them again; writing them
  // here keeps at most one batch of them in memory. With none, the claim starts at once, before
  // the read of the attempt taken with it.
  if (run.reschedules.length > 0) await writeReschedules(run);
  const claimedAt = deps.now();
  const batch = await deps.store.claimDueAttempts({
    now: claimedAt,
    maxAgeMs: SWEEP_WINDOW_MS,
    limit: opts.batchSize,
    leaseMs: opts.leaseMs,
    owner: opts.owner,
    ...(deps.platform === undefined ? {} : { platform: deps.platform }),
  });
  // Claims come most overdue first, so the run's first claim holds its oldest due attempt.
  if (report.claimed === 0 && batch[0] !== undefined) report.oldestDueAgeMs = claimedAt - batch[0].nextCheckAt;
  if (batch.length < opts.batchSize) run.exhausted = true;
  // "Each claimed attempt is read at most once per run": one read already, due again, stays leased
  // (no other process reads it meanwhile) and is handed back at the end, for the next run to read.
  const unread = batch.filter((attempt) => !run.readThisRun.has(attempt.sessionId));
  run.setAside += batch.length - unread.length;
  report.claimed += unread.length;
  for (const attempt of unread) run.leaseEnds.set(attempt, claimedAt + opts.leaseMs);
  // RETURNING gives rows in table order, not the claim's ORDER BY: sort so pop() takes the most overdue
  // first; the previous batch's last attempts (more overdue still) stay at the end.
  run.claimed = [...unread.sort((a, b) => b.nextCheckAt - a.nextCheckAt), ...run.claimed];
}

/**
 * True (and counted) when less than a quarter of the attempt's lease is left: at a slow pace a
 * batch can outlast its claim, and an attempt read after its lease lapsed may be claimed and read
 * by another process too (a read paid twice). Left to lapse, it is read by the next claim.
 */
export function leaseRunningOut<Tx>(run: Run<Tx>, attempt: Attempt): boolean {
  const leaseEnd = run.leaseEnds.get(attempt);
  if (leaseEnd === undefined || leaseEnd - run.deps.now() > run.opts.leaseMs / 4) return false;
  run.report.leftToLapse++;
  return true;
}

/** Queues the attempt's next check; written with the others before the next claim and at the end. */
export function reschedule<Tx>(run: Run<Tx>, attempt: Attempt, nextCheckAt: number): void {
  run.reschedules.push({ sessionId: attempt.sessionId, nextCheckAt });
}

export async function writeReschedules<Tx>(run: Run<Tx>): Promise<void> {
  const checks = run.reschedules.splice(0);
  if (checks.length === 0) return;
  try {
    await run.deps.store.scheduleNextChecks(run.opts.owner, checks);
  } catch (error) {
    // The leases lapse on their own; the attempts are not lost.
    run.report.errors += checks.length;
    run.logger?.error({ attempts: checks.length, err: describe(error) }, 'sweep: could not reschedule attempts');
  }
}

/** Stopped or out of time with claimed attempts not started, or some set aside: hand them back now. */
export async function releaseUnstarted<Tx>(run: Run<Tx>): Promise<void> {
  if (run.claimed.length === 0 && run.setAside === 0) return;
  run.report.released = run.claimed.length;
  run.claimed = [];
  try {
    await run.deps.store.releaseClaims(run.opts.owner);
  } catch (error) {
    run.logger?.error({ err: describe(error) }, 'sweep: could not release claims; they lapse with the lease');
  }
}
