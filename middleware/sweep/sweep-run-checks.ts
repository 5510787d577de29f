/**
 * A sweep run's checks: `concurrency` workers, each reading a claimed attempt's status, then
 * handing a verified or failed one to the run's group committer (fulfil/group-commit.ts) and
 * starting its next read at once; a still-pending one, or one whose read failed, is rescheduled.
 */
import { isKitError, type KitError, KitErrorCode } from '../errors.ts';
import { logCompletion } from '../fulfil/completion-log.ts';
import {
  applyStatus,
  countsTexts,
  fulfillable,
  readStatus,
  startedByAnotherClient,
  type StatusRead,
} from '../fulfil/fulfil.ts';
import { describeError as describe } from '../logger.ts';
import type { Attempt } from '../store/types.ts';
import { computeNextCheckAt, nextCheckAfterFailure } from './schedule.ts';
import { SWEEP_WINDOW_MS } from './sweep-options.ts';
import { countCompletion } from './sweep-report.ts';
import { leaseRunningOut, reschedule, take } from './sweep-run-claims.ts';
import type { Run } from './sweep-run-state.ts';

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

/** `concurrency` workers, each taking the next claimed attempt and checking it, until none is left. */
export async function checkDueAttempts<Tx>(run: Run<Tx>): Promise<void> {
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
  if (!countsTexts(run.deps) && !fulfillable(run.deps, attempt)) {
    // A paid read that could change nothing: its action is gone, or it cannot prove what the
    // action needs. Moved on as if read pending; the 24 h line expires it.
    run.report.unfulfillable++;
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
  run.readThisRun.add(attempt.sessionId);
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
    // Still pending is counted in the run's line; anything settled gets its own, and is never
    // claimed again, so the run need not remember it.
    if (completion.kind !== 'pending') {
      logCompletion(run.deps.logger, 'sweep', completion);
      run.readThisRun.delete(attempt.sessionId);
    }
  } catch (error) {
    checkFailed(run, attempt, error);
  }
}

/**
 * The code a failed check is scheduled and logged by. A fulfilment calls no service: a service's
 * code there is the action's own KitError (its ledger's service down), a failed fulfilment like
 * any other, never a read the service left unanswered, which is read again soon every time.
 */
function failureCode(error: unknown, of: { read: boolean }): string | undefined {
  if (!isKitError(error)) return undefined;
  return !of.read && SERVICE_FAILURES.has(error.code) ? KitErrorCode.FulfilFailed : error.code;
}

/** A read (`of.read`) or fulfilment failed: nothing was marked; the attempt is read again later. */
function checkFailed<Tx>(run: Run<Tx>, attempt: Attempt, error: unknown, of = { read: false }): void {
  const { report, deps, opts } = run;
  report.errors++;
  const code = failureCode(error, of);
  if (of.read) run.answers.failed(error);
  const serviceFailure = code === undefined || SERVICE_FAILURES.has(code);
  const at = nextCheckAfterFailure(attempt, deps.now(), { code }, opts);
  run.logger?.[serviceFailure ? 'warn' : 'error'](
    { sessionId: attempt.sessionId, err: describe(error), nextCheckAt: at },
    'sweep: status check failed; the attempt stays pending and is read again later',
  );
  reschedule(run, attempt, at);
}
