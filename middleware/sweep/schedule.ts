/** When the sweep reads a still-pending attempt again: backoff inside the 24 h window. */
import type { Attempt } from '../store/types.ts';
import { DEFAULT_SWEEP_BACKOFF_MS, SWEEP_WINDOW_MS } from './sweep-options.ts';

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
