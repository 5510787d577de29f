/** When the sweep reads a still-pending attempt again: inside the 24 h window, never past it. */
import { KitErrorCode } from '../errors.ts';
import type { Attempt } from '../store/types.ts';
import { nextReadAge } from './read-ages.ts';
import { SWEEP_WINDOW_MS } from './sweep-options.ts';

/**
 * When to read a still-pending attempt next. By default the read ages of read-ages.ts. With the
 * integrator's own `backoffMs`, `now` + the delay for the reads made so far (the last repeats);
 * when that would fall outside the window, one last read is placed a minute before its end. After
 * the last read the attempt gets the window's end, where it is no longer claimable and the next
 * run marks it expired.
 */
export function computeNextCheckAt(
  attempt: Pick<Attempt, 'createdAt' | 'sweepChecks'>,
  now: number,
  backoffMs?: readonly number[],
): number {
  const windowEnd = attempt.createdAt + SWEEP_WINDOW_MS;
  if (backoffMs === undefined || backoffMs.length === 0) {
    return Math.min(attempt.createdAt + nextReadAge(now - attempt.createdAt), windowEnd);
  }
  const delay = backoffMs[Math.min(attempt.sweepChecks, backoffMs.length - 1)] ?? 0;
  const lastRead = windowEnd - 60_000;
  const next = now + delay;
  if (next <= lastRead) return next;
  return now < lastRead ? lastRead : windowEnd;
}

/**
 * Failures read again after `errorRetryMs` only while the attempt has had fewer reads than this:
 * those that may pass by the next read, though the kit cannot tell whether they will
 * (MAY_PASS_SOON). Each read is paid for: one failing that way on every read would otherwise be
 * read every errorRetryMs for the whole 24 h (some 2,800 reads). The first reads are when the user
 * most likely just finished, so a blip there is still retried soon; later the schedule, so such a
 * failure costs at most this many reads more than the schedule.
 */
export const QUICK_RETRY_READS = 3;

/**
 * Failures that may pass by the next read: a plain error (a ready client's own throw, which may be
 * "no answer" or an answer it could not use; a store call that failed), an action whose fulfil
 * threw or whose commit failed (fulfil_failed: a lock timeout looks the same as a constraint the
 * row always breaks), an async fulfil that was late and rolled back (hook_failed: a lock wait, a
 * slow database), and a store that did not answer in time (store_unavailable). The last is
 * bounded too: the kit cannot tell a store down for a minute from one down for hours, and every
 * retry of the write pays for another read first.
 */
const MAY_PASS_SOON: ReadonlySet<string | undefined> = new Set([
  undefined,
  KitErrorCode.FulfilFailed,
  KitErrorCode.HookFailed,
  KitErrorCode.StoreUnavailable,
]);

/** A failed check: the kit error's code (undefined: a plain error). */
export interface CheckFailure {
  code: string | undefined;
}

/**
 * When to read an attempt again after its check failed. A read the service did not answer
 * (unreachable, a 5xx, a timeout, the connection lost mid-body: service_unavailable) is read again
 * after `errorRetryMs`, or at its scheduled time if sooner: the answer may well come next time. So
 * is a failure that may pass (MAY_PASS_SOON), in the attempt's first reads (QUICK_RETRY_READS).
 * Anything else waits for the schedule, an answer the service gave but the kit cannot use (a
 * status it does not know, a body outside the spec) included: asked again, the service most likely
 * gives the same answer, and each read is paid for. The schedule, not a growing retry, because it
 * is the number of reads the integrator already budgets for an attempt; a one-off garbled answer
 * costs one step of it.
 */
export function nextCheckAfterFailure(
  attempt: Pick<Attempt, 'createdAt' | 'sweepChecks'>,
  now: number,
  failure: CheckFailure,
  opts: { backoffMs?: readonly number[] | undefined; errorRetryMs: number },
): number {
  const scheduled = computeNextCheckAt(attempt, now, opts.backoffMs);
  return readAgainSoon(attempt, failure) ? Math.min(now + opts.errorRetryMs, scheduled) : scheduled;
}

function readAgainSoon(attempt: Pick<Attempt, 'sweepChecks'>, { code }: CheckFailure): boolean {
  if (code === KitErrorCode.ServiceUnavailable) return true;
  return MAY_PASS_SOON.has(code) && attempt.sweepChecks < QUICK_RETRY_READS;
}
