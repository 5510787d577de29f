/**
 * The service's status-read limit in the simulated day, counted on the day's clock. The emulator's
 * own limit counts real time, and the day runs about a thousand times faster than a real one: it
 * would refuse reads no real day sends that fast, and how many would follow the machine's speed.
 * The bucket is the emulator's (R reads a second, a second's worth saved up); a refused read is
 * the client's 429, and its caller waits out the Retry-After, so that much of the day passes.
 */
import { RateLimits } from '../../emulator/api/rate-limits.ts';
import type { TestClock } from '../../emulator/clock.ts';
import { KitError, KitErrorCode } from '../../middleware/errors.ts';

export interface DayReadLimit {
  /** Takes a token for a read now; else moves the day past the Retry-After and throws the client's 429. */
  take(): void;
  /** Reads refused so far. */
  readonly refused: number;
}

export function dayReadLimit(clock: TestClock, perSecond: number): DayReadLimit {
  const limits = new RateLimits({ statusReadsPerSecond: perSecond, createsPerSecond: 0 });
  let refused = 0;
  return {
    get refused() {
      return refused;
    },
    take() {
      const waitMs = limits.wait('day', 'status', clock.now());
      if (waitMs === 0) return;
      refused++;
      const retryAfterSeconds = Math.max(1, Math.ceil(waitMs / 1000));
      // The kit's pacer waits out the Retry-After (in real time): on the day's clock, so much time passes.
      clock.advance({ seconds: retryAfterSeconds });
      throw new KitError(KitErrorCode.ServiceBusy, 'The verification service answered 429 (rate limited).', {
        serviceStatus: 429,
        retryAfterSeconds,
      });
    },
  };
}
