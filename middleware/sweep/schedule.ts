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
 * Reads failing with a plain error (not the kit's) that are read again after `errorRetryMs`: only
 * while the attempt has had fewer reads than this. A ready client's own throw may be "no answer" or
 * an answer it could not use, and the kit cannot tell which: one that throws on every read would
 * otherwise be read every errorRetryMs for the whole 24 h (some 2,800 paid reads). The first reads
 * are when the user most likely just finished, so a blip there is still read again soon; later the
 * schedule, so such a client costs at most this many reads more than the schedule.
 */
export const PLAIN_ERROR_QUICK_READS = 3;

/** A failed check: the kit error's code (undefined: a plain error), and whether the read failed (else the fulfilment). */
export interface CheckFailure {
  code: string | undefined;
  read: boolean;
}

/**
 * When to read an attempt again after its check failed. A read the service did not answer
 * (unreachable, a 5xx, a timeout, the connection lost mid-body: service_unavailable) is read again
 * after `errorRetryMs`, or at its scheduled time if sooner: the answer may well come next time. So
 * is a fulfilment the store failed (the service answered; only the write is missing), and a ready
 * client's plain error in the attempt's first reads (PLAIN_ERROR_QUICK_READS).
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

function readAgainSoon(attempt: Pick<Attempt, 'sweepChecks'>, { code, read }: CheckFailure): boolean {
  if (code !== undefined) return code === KitErrorCode.ServiceUnavailable;
  return !read || attempt.sweepChecks < PLAIN_ERROR_QUICK_READS;
}
