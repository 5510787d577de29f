/**
 * The steps of one sweep run, in order: expire what left the 24 h window, apply retention, then
 * claim due attempts batch by batch and check each one (read its status, then fulfil, record the
 * failure or reschedule), release what was claimed but not started, deliver outcome events, report.
 *
 * A check's read and its write are split: the worker that read a verified status hands the
 * fulfilment to the run's group committer and starts its next read at once, so `concurrency`
 * reads stay in flight while fulfilments that became ready together share one commit
 * (fulfil/group-commit.ts). Fulfilments waiting for their commit are bounded by the batch size.
 */
import { isKitError, type KitError, KitErrorCode } from '../errors.ts';
import { applyStatus, readStatus, startedByAnotherClient, type StatusRead } from '../fulfil/fulfil.ts';
import { logCompletion } from '../fulfil/completion-log.ts';
import { groupCommitter, type FulfilCommitter } from '../fulfil/group-commit.ts';
import { deliverOutcomeEvents } from '../fulfil/outcomes.ts';
import { applyRetention, stepUpPurgeMs, warnOfNoGrantPurge } from './retention.ts';
import type { Attempt, NextCheck, OutcomeRecording } from '../store/types.ts';
import { describeError as describe, safeLogger, type KitLogger } from '../logger.ts';
import { computeNextCheckAt, nextCheckAfterFailure } from './schedule.ts';
import { countCompletion, emptyReport, type SweepDeps, type SweepReport } from './sweep-report.ts';
import { SWEEP_WINDOW_MS, type ResolvedSweepOptions, type SweepOptions } from './sweep-options.ts';
import { countOutcomes } from '../telemetry.ts';
import { gatherWindowMs } from './gather-window.ts';
import { createPacer, type Pacer } from './pacing.ts';
import { readAnswers, type ReadAnswers } from './read-answers.ts';
import { deliveryStop, readsCutOff, runBudget, withinBudget, type ReadsCutOff } from './time-budget.ts';

/** The service's failures (unreachable, or answering outside the spec): warnings, not the kit's errors. */
const SERVICE_FAILURES: ReadonlySet<string> = new Set([
  KitErrorCode.ServiceUnavailable,
  KitErrorCode.ServiceProtocolError,
]);

/**
 * Fulfilments recorded in the background, in batches: reads stop while this many are unsettled.
 * Two batches, so that the next group fills while one commits.
 */
const UNSETTLED_BATCHES = 2;

/** What every step of one run reads and updates. */
interface Run<Tx> {
  deps: SweepDeps<Tx>;
  opts: ResolvedSweepOptions;
  logger: KitLogger | undefined;
  signal: AbortSignal | undefined;
  startedAt: number;
  /** The clock of the budget (opts.monotonicNow; performance.now unless the deps give one). */
  clock: () => number;
  /** No read starts after this (by `clock`); the rest of the budget finishes what started. */
  readsEndAt: number;
  /**
   * Gives up a read still unanswered when the run's budget, finishing time included, is over (one
   * timer for the run, not one per read). Every read starts before `readsEndAt`, so each gets at
   * least the finishing time.
   */
  readsCutOff: ReadsCutOff;
  report: SweepReport;
  /** Asks the store to also write outcome events (only when an onOutcome hook is set). */
  event: OutcomeRecording | undefined;
  committer: FulfilCommitter<Tx>;
  /** Read permits: the pace every sweep process shares after a 429, and the cap. */
  pacer: Pacer;
  /** Fulfilments handed to the committer and not yet settled. */
  applying: Set<Promise<void>>;
  /**
   * The last fulfilment handed over per user and action, until it settles. Attempts of one user and
   * action commit in the order they were read, never in one group, so a group never applies an older
   * attempt that a newer one read before it would have superseded.
   */
  lastOfIntent: Map<string, Promise<void>>;
  /** Still-pending attempts whose next check is not written yet (written a batch at a time). */
  reschedules: NextCheck[];
  /** Claimed attempts not yet started, most overdue last (pop); the next batch is claimed ahead. */
  claimed: Attempt[];
  /** When each claimed attempt's lease ends (the run's clock); an entry goes with its attempt. */
  leaseEnds: WeakMap<Attempt, number>;
  exhausted: boolean;
  claiming: Promise<void> | undefined;
  /** Whether the reads reach the service: none answering stops them. */
  answers: ReadAnswers;
  /** Claimed attempts that crossed the 24 h line before their read: expired after the checks. */
  tooOld: number;
}

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

function startRun<Tx>(deps: SweepDeps<Tx>, opts: ResolvedSweepOptions, options: SweepOptions): Run<Tx> {
  // The run's warnings go to its own logger, else to the kit's; a throwing logger never stops a check.
  const logger = safeLogger(options.logger ?? deps.logger);
  const clock = opts.monotonicNow;
  const startedAt = clock();
  const logged = { ...deps, logger: safeLogger(deps.logger) ?? logger };
  const budget = runBudget(opts.timeBudgetMs, deps.hookTimeouts);
  // Every step of the run reaches the store and the callbacks through these: bounded by the budget.
  const bounded = withinBudget(logged, startedAt, budget, clock);
  const pacer = createPacer({
    store: bounded.store,
    cap: opts.maxReadsPerSecond,
    signal: options.signal,
    deadline: Date.now() + budget.readingMs,
  });
  return {
    deps: bounded,
    opts,
    logger,
    signal: options.signal,
    startedAt,
    clock,
    readsEndAt: startedAt + budget.readingMs,
    readsCutOff: readsCutOff(startedAt, budget, clock),
    report: emptyReport(opts.owner),
    event: deps.onOutcome === undefined ? undefined : { source: 'sweep' },
    // Two groups in flight at the default concurrency of 4: one works while the other waits for its commit.
    committer: groupCommitter(bounded.store, {
      maxGroup: opts.batchSize,
      parallel: Math.ceil(opts.concurrency / 2),
      gatherMs: () => gatherWindowMs(pacer.readsPerSecond(), opts.batchSize, opts.leaseMs),
    }),
    pacer,
    applying: new Set(),
    lastOfIntent: new Map(),
    reschedules: [],
    claimed: [],
    leaseEnds: new WeakMap(),
    exhausted: false,
    claiming: undefined,
    answers: readAnswers(opts.concurrency),
    tooOld: 0,
  };
}

/** Why the run starts no more reads, or null while it may. */
function stopReason<Tx>(run: Run<Tx>): SweepReport['stoppedBy'] {
  if (run.report.stoppedBy !== null) return run.report.stoppedBy;
  if (run.signal?.aborted === true) return 'signal';
  if (run.clock() >= run.readsEndAt) return 'time_budget';
  if (run.answers.nothingAnswers()) return 'service_unreachable';
  return null;
}

/** Marks pending attempts past the 24 h window expired; they are never read again. */
async function expireOutsideWindow<Tx>(run: Run<Tx>): Promise<void> {
  const expired = await run.deps.store.expireAttempts(run.deps.now(), SWEEP_WINDOW_MS, run.event);
  countOutcomes(expired, 'expired', 'sweep');
  run.report.expired += expired;
}

/** `concurrency` workers, each taking the next claimed attempt and checking it, until none is left. */
async function checkDueAttempts<Tx>(run: Run<Tx>): Promise<void> {
  const workers = Array.from({ length: run.opts.concurrency }, async () => {
    for (;;) {
      // Awaited only while the next batch is being claimed: most attempts are taken at once.
      let attempt = take(run);
      if (attempt instanceof Promise) attempt = await attempt;
      if (attempt === undefined) return;
      await checkOne(run, attempt);
    }
  });
  // allSettled: if a claim fails, the other workers' in-flight reads still finish before we return.
  const settled = await Promise.allSettled(workers);
  const failure = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failure !== undefined) throw failure.reason;
}

/**
 * The next attempt to check; undefined when the run is done; a promise of either only while the
 * worker must wait for a claim. The next batch is claimed while half of this one (at least
 * `concurrency` attempts) is still to be read: on a busy database a claim's round trip takes as
 * long as several reads, and no worker should wait for it.
 */
function take<Tx>(run: Run<Tx>): Attempt | undefined | Promise<Attempt | undefined> {
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
  report.claimed += batch.length;
  for (const attempt of batch) run.leaseEnds.set(attempt, claimedAt + opts.leaseMs);
  if (batch.length < opts.batchSize) run.exhausted = true;
  // RETURNING gives rows in table order, not the claim's ORDER BY: sort so pop() takes the most overdue
  // first; the previous batch's last attempts (more overdue still) stay at the end.
  run.claimed = [...batch.sort((a, b) => b.nextCheckAt - a.nextCheckAt), ...run.claimed];
}

/**
 * True (and counted) when less than a quarter of the attempt's lease is left: at a slow pace a
 * batch can outlast its claim, and an attempt read after its lease lapsed may be claimed and read
 * by another process too (a read paid twice). Left to lapse, it is read by the next claim.
 */
function leaseRunningOut<Tx>(run: Run<Tx>, attempt: Attempt): boolean {
  const leaseEnd = run.leaseEnds.get(attempt);
  if (leaseEnd === undefined || leaseEnd - run.deps.now() > run.opts.leaseMs / 4) return false;
  run.report.leftToLapse++;
  return true;
}

/**
 * Reads one attempt's status; a pending one is rescheduled, a verified or failed one is recorded in
 * the background (the next read need not wait for this one's commit).
 */
async function checkOne<Tx>(run: Run<Tx>, attempt: Attempt): Promise<void> {
  const now = run.deps.now();
  if (attempt.createdAt <= now - SWEEP_WINDOW_MS) {
    // Crossed the 24 h line since the claim: never read it; the expiry after the checks marks it.
    run.tooOld++;
    reschedule(run, attempt, attempt.createdAt + SWEEP_WINDOW_MS);
    return;
  }
  if (startedByAnotherClient(run.deps, attempt)) {
    // Only that client can read it. Moved on in the schedule as if read pending: left due, it
    // would stay the most overdue, and every claim would take it first again.
    run.report.otherClient++;
    reschedule(run, attempt, computeNextCheckAt(attempt, now, run.opts.backoffMs));
    return;
  }
  if (!run.pacer.takeNow() && !(await run.pacer.acquire())) {
    // Stopped, or the service's Retry-After outlasts the run: released with the rest.
    run.report.stoppedBy = run.signal?.aborted === true ? 'signal' : 'time_budget';
    run.claimed.push(attempt);
    return;
  }
  // The wait for a permit may have outlasted the claim (a slow pace).
  if (leaseRunningOut(run, attempt)) return;
  run.report.reads++;
  let read: StatusRead<Tx>;
  try {
    // A ready client is the app's code: a read that never settles must not hold the run open.
    read = await run.readsCutOff.race(readStatus(run.deps, attempt));
  } catch (error) {
    if (isKitError(error, KitErrorCode.ServiceBusy)) await readAgainLater(run, attempt, error);
    else checkFailed(run, attempt, error, { read: true });
    return;
  }
  run.answers.answered();
  if (read.kind === 'pending') {
    run.report.pending++;
    reschedule(run, attempt, computeNextCheckAt(attempt, run.deps.now(), run.opts.backoffMs));
    return;
  }
  const intent = `${attempt.userRef}\u0000${attempt.action}`;
  const before = run.lastOfIntent.get(intent);
  // As finally(), without its two promises more per attempt; a function of the module, not a
  // closure named per attempt (run through tsx, each named closure costs a defineProperty).
  const applying: Promise<void> = (
    before === undefined ? applyOne(run, attempt, read) : before.then(() => applyOne(run, attempt, read))
  ).then(
    () => settled(run, intent, applying),
    (error: unknown) => {
      settled(run, intent, applying);
      throw error;
    },
  );
  run.applying.add(applying);
  run.lastOfIntent.set(intent, applying);
  if (run.applying.size >= UNSETTLED_BATCHES * run.opts.batchSize) await Promise.race(run.applying);
}

/** A fulfilment handed to the committer settled: the run no longer waits for it. */
function settled<Tx>(run: Run<Tx>, intent: string, applying: Promise<void>): void {
  run.applying.delete(applying);
  if (run.lastOfIntent.get(intent) === applying) run.lastOfIntent.delete(intent);
}

/** The service answered 429: every sweep process slows down, and this attempt is read again after the pause. */
async function readAgainLater<Tx>(run: Run<Tx>, attempt: Attempt, error: KitError): Promise<void> {
  run.report.rateLimited++;
  await run.pacer.limited(error);
  run.claimed.push(attempt);
}

/** Records what a read found (through the run's group committer) and counts it. Never rejects. */
async function applyOne<Tx>(run: Run<Tx>, attempt: Attempt, read: StatusRead<Tx>): Promise<void> {
  try {
    const completion = await applyStatus(run.deps, attempt, read, 'sweep', run.committer);
    countCompletion(run.report, completion);
    // Still pending is counted in the run's line; anything settled gets its own.
    if (completion.kind !== 'pending') logCompletion(run.deps.logger, 'sweep', completion);
  } catch (error) {
    checkFailed(run, attempt, error);
  }
}

/** A read (`of.read`) or fulfilment failed: nothing was marked; the attempt is read again later. */
function checkFailed<Tx>(run: Run<Tx>, attempt: Attempt, error: unknown, of = { read: false }): void {
  const { report, deps, opts } = run;
  report.errors++;
  const code = isKitError(error) ? error.code : undefined;
  if (of.read) run.answers.failed(error);
  const serviceFailure = code === undefined || SERVICE_FAILURES.has(code);
  const at = nextCheckAfterFailure(attempt, deps.now(), { code }, opts);
  run.logger?.[serviceFailure ? 'warn' : 'error'](
    { sessionId: attempt.sessionId, err: describe(error), nextCheckAt: at },
    'sweep: status check failed; the attempt stays pending and is read again later',
  );
  reschedule(run, attempt, at);
}

/** Queues the attempt's next check; written with the others before the next claim and at the end. */
function reschedule<Tx>(run: Run<Tx>, attempt: Attempt, nextCheckAt: number): void {
  run.reschedules.push({ sessionId: attempt.sessionId, nextCheckAt });
}

async function writeReschedules<Tx>(run: Run<Tx>): Promise<void> {
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

/** Stopped or out of time with claimed attempts not started: hand them back now. */
async function releaseUnstarted<Tx>(run: Run<Tx>): Promise<void> {
  if (run.claimed.length === 0) return;
  run.report.released = run.claimed.length;
  run.claimed = [];
  try {
    await run.deps.store.releaseClaims(run.opts.owner);
  } catch (error) {
    run.logger?.error({ err: describe(error) }, 'sweep: could not release claims; they lapse with the lease');
  }
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
