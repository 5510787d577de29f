/** When the sweep reads a still-pending attempt again: inside the 24 h window, never past it. */
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
