/**
 * The simulated day's clock: the emulator's test clock interface, on a clock that moves only when
 * told, from a fixed start. The emulator's own test clock is the real time plus an offset, so the
 * time a sweep run took on the machine would leak into the day's figures; on this one they follow
 * from the traffic model and its seed alone.
 *
 * Nothing the day runs waits for this clock to move: the sweep's time budget and its pacing, the
 * client's retries and the fulfilments' gathering count real time, and the day moves this clock
 * itself to each event and to each sweep run (day.ts).
 */
import type { TestClock } from '../../emulator/clock.ts';

/** 2026-01-01T00:00:00Z: a minute boundary, so the day's minutes (the peak read rate) fall the same way every run. */
export const DAY_CLOCK_START = Date.UTC(2026, 0, 1);

/** A clock at `startAt` that moves only by `advance` (to the millisecond); `reset` brings it back to `startAt`. */
export function createStillClock(startAt: number = DAY_CLOCK_START): TestClock {
  let at = startAt;
  return {
    now: () => at,
    advance(by: { seconds: number }) {
      const seconds = (by as { seconds?: unknown } | null)?.seconds;
      if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0) {
        throw new RangeError(
          `The clock only moves forward: advance({ seconds }) needs a number >= 0, got ${String(seconds)}.`,
        );
      }
      at += Math.round(seconds * 1000);
    },
    reset() {
      at = startAt;
    },
  };
}
