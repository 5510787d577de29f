/**
 * The SMS pumping thresholds (middleware/pumping/pumping-rules.ts), pure: the daily threshold
 * learns from the best verified day of the fortnight, a key trips when its unverified texts reach
 * the threshold (one more text would pass it), and a key with no history keeps the floors each
 * kind of key is documented with.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_THRESHOLDS, thresholdsOf, trippedBy } from '../../middleware/pumping/pumping-rules.ts';
import type { PumpingCount } from '../../middleware/store/types.ts';

const HOUR = 3_600_000;
/** The start of an hour: the last 60 minutes are this hour's bucket and the whole previous one. */
const NOW = 480_000 * HOUR;

/** Texts earlier in the day, none in the last two hours: only the daily rule can trip. */
const earlierToday = (sent: number, verified: number, maxVerifiedDay = verified): PumpingCount => ({
  sentThisHour: 0,
  verifiedThisHour: 0,
  sentLastHour: 0,
  verifiedLastHour: 0,
  sentLastDay: sent,
  verifiedLastDay: verified,
  maxVerifiedDay,
  refusedThisHour: 0,
  refusedLastHour: 0,
});

describe('the SMS pumping thresholds', () => {
  const country = DEFAULT_THRESHOLDS.country;

  it('give a country room in proportion to its best verified day of the last 14, not only to today', () => {
    // 40 unverified today, 10 verified; a fortnight ago the country verified 100 in a day.
    const busy = earlierToday(50, 10, 100);
    expect(thresholdsOf(busy, country, NOW).daily).toBe(50);
    expect(trippedBy('country', busy, country, NOW)).toEqual([]);
    // The same day in a country whose best day is today's: the floor of 20 decides, and it trips.
    const quiet = earlierToday(50, 10);
    expect(thresholdsOf(quiet, country, NOW).daily).toBe(20);
    expect(trippedBy('country', quiet, country, NOW)).toEqual(['country_daily']);
  });

  it('trip a key when its unverified texts of the day reach the threshold, not one text later', () => {
    expect(trippedBy('country', earlierToday(19, 0), country, NOW)).toEqual([]);
    expect(trippedBy('country', earlierToday(20, 0), country, NOW)).toEqual(['country_daily']);
  });

  it('keep the documented floors for a key with no history: 6 unverified a day for a block, 10 for an address', () => {
    const { block, address } = DEFAULT_THRESHOLDS;
    expect(trippedBy('block', earlierToday(5, 0), block, NOW)).toEqual([]);
    expect(trippedBy('block', earlierToday(6, 0), block, NOW)).toEqual(['block_daily']);
    expect(trippedBy('address', earlierToday(9, 0), address, NOW)).toEqual([]);
    expect(trippedBy('address', earlierToday(10, 0), address, NOW)).toEqual(['address_daily']);
  });
});
