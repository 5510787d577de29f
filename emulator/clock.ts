/**
 * The emulator's virtual clock: real time plus an offset that `POST /_control/clock` advances,
 * so tests can cross the 120 s handoff TTL and the 24 h windows without waiting. The same clock
 * can be handed to the kit (`now: clock.now`), so the kit's sweep and the emulator move together.
 */

/** A clock that the emulator and the kit share in a test (`createTestClock`). */
export interface TestClock {
  /** Milliseconds since the epoch: the real time plus every advance. Bound: pass it as `now`. */
  readonly now: () => number;
  /**
   * Moves the clock forward by the time named: `advance({ seconds: 181 })` (the emulator's control
   * `advanceClock(seconds)` does the same).
   */
  advance(by: { seconds: number }): void;
  /** Back to the real time (the emulator's control `reset` does it too). */
  reset(): void;
}

/** The last moment the clock may show: a date any store and any ISO 8601 text (four-digit year) holds. */
export const LATEST_CLOCK_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

export class VirtualClock implements TestClock {
  #offsetMs = 0;

  readonly now = (): number => Date.now() + this.#offsetMs;

  advance(by: { seconds: number }): void {
    if (typeof by !== 'object' || by === null) {
      throw new TypeError(
        `advance names its unit: advance({ seconds: ${typeof by === 'number' ? by : 'n'} }), got ${String(by)}.`,
      );
    }
    const { seconds } = by;
    if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0) {
      throw new RangeError(
        `The clock only moves forward: advance({ seconds }) needs a number >= 0, got ${String(seconds)}.`,
      );
    }
    // Past it every date the kit or the emulator writes throws: refused before anything moves.
    if (this.now() + seconds * 1000 > LATEST_CLOCK_MS) {
      throw new RangeError(
        `advance({ seconds: ${seconds} }) would move the clock past 9999-12-31, the last date it can show.`,
      );
    }
    this.#offsetMs += seconds * 1000;
  }

  reset(): void {
    this.#offsetMs = 0;
  }
}

/**
 * A clock for your tests that the kit, the emulator and the integration audit share: pass it to
 * `startEmulator({ clock })` and to `createVerificationKit({ now: clock.now })`, then
 * `clock.advance({ seconds: 181 })` reaches the sweep's first check (and moves the hosted service's time)
 * without sleeping.
 */
export function createTestClock(): TestClock {
  return new VirtualClock();
}
