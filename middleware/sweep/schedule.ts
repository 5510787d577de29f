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
 * When to read an attempt again after its check failed with `code` (undefined: not a kit error).
 * A read the service did not answer (unreachable, a 5xx, a timeout, the connection lost mid-body) is read again
 * after `errorRetryMs`, or at its scheduled time if sooner: the answer may well come next time.
 * Anything else waits for the schedule, an answer the service gave but the kit cannot use (a
 * status it does not know, a body outside the spec) included: asked again, the service most likely
 * gives the same answer, and each read is paid for. The schedule, not a growing retry, because it
 * is the number of reads the integrator already budgets for an attempt; a one-off garbled answer
 * costs one step of it.
 */
export function nextCheckAfterFailure(
  attempt: Pick<Attempt, 'createdAt' | 'sweepChecks'>,
  now: number,
  code: string | undefined,
  opts: { backoffMs?: readonly number[] | undefined; errorRetryMs: number },
): number {
  const scheduled = computeNextCheckAt(attempt, now, opts.backoffMs);
  // Not a kit error (a ready client's own throw, a store failure): whether anything answered is unknown.
  const unanswered = code === undefined || code === KitErrorCode.ServiceUnavailable;
  return unanswered ? Math.min(now + opts.errorRetryMs, scheduled) : scheduled;
}
