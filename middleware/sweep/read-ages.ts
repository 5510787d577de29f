/**
 * The sweep's default read times for a still-pending attempt, by its age: dense in the minutes
 * when a verification is likely, geometric afterwards, and a last read just inside the 24 h
 * window. An attempt nobody finishes costs 16 reads (the first one at `sweep.firstCheckAfterMs`).
 */
import { SWEEP_WINDOW_MS } from './sweep-options.ts';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

/** Ages (ms since the attempt started) at which the sweep reads it again, after its first read. */
export const DEFAULT_SWEEP_READ_AGES_MS: readonly number[] = [
  4.5 * MINUTE_MS,
  6.5 * MINUTE_MS,
  9 * MINUTE_MS,
  12 * MINUTE_MS,
  16 * MINUTE_MS,
  22 * MINUTE_MS,
  30 * MINUTE_MS,
  45 * MINUTE_MS,
  75 * MINUTE_MS,
  2 * HOUR_MS,
  3.5 * HOUR_MS,
  6 * HOUR_MS,
  10 * HOUR_MS,
  16 * HOUR_MS,
  // The spec keeps an outcome readable for 24 hours: one last read a minute before that.
  SWEEP_WINDOW_MS - MINUTE_MS,
];

/** Two reads of one attempt are at least this far apart, however late a run took the earlier one. */
const MIN_READ_GAP_MS = 30_000;

/**
 * When to read an attempt of age `ageMs` next, as an age: the first scheduled age at least 30 s
 * away (a late run skips the times it missed instead of catching up), or the window's end once
 * none is left, where the attempt is no longer claimable and the next run marks it expired.
 */
export function nextReadAge(ageMs: number): number {
  return DEFAULT_SWEEP_READ_AGES_MS.find((age) => age >= ageMs + MIN_READ_GAP_MS) ?? SWEEP_WINDOW_MS;
}
