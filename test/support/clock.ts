/**
 * A test's clock for the kit (its `now` option): the real time, shifted while a test asks. A test
 * that needs an old attempt starts it in the past through the kit itself (`shifted(-2 * DAY_MS,
 * ...)`), and sweeps or lands later with `{ ...contextOf(kit), now }`, instead of rewriting
 * `created_at` or `next_check_at` with SQL: the same suite then runs on any store.
 */
export const DAY_MS = 86_400_000;

export interface TestClock {
  /** The kit's clock: Date.now() plus the current shift. */
  now(): number;
  /** Runs `body` with the clock moved by `offsetMs` (negative: the past), then moves it back. */
  shifted<T>(offsetMs: number, body: () => Promise<T>): Promise<T>;
  /** Runs `body` with the clock stopped at exactly `at` (a boundary to the millisecond), then lets it run again. */
  pinned<T>(at: number, body: () => Promise<T>): Promise<T>;
}

export function createTestClock(): TestClock {
  let offsetMs = 0;
  let pinnedAt: number | undefined;
  const moved = async <T>(set: () => void, body: () => Promise<T>): Promise<T> => {
    if (offsetMs !== 0 || pinnedAt !== undefined) throw new Error('the test clock is already moved: moves do not nest');
    set();
    try {
      return await body();
    } finally {
      offsetMs = 0;
      pinnedAt = undefined;
    }
  };
  return {
    now: () => pinnedAt ?? Date.now() + offsetMs,
    shifted: (by, body) => moved(() => (offsetMs = by), body),
    pinned: (at, body) => moved(() => (pinnedAt = at), body),
  };
}
