/**
 * Property-based (fast-check): the limits a PostgreSQL check counts a text within before the app
 * has judged its reading (sureLimitsFor). Whenever a reading is within them (the SureLimits checks:
 * no live rule, the address's unverified countries, and per key the unverified texts of 24 hours,
 * of this hour and the whole hour before, and both hours' refusals), `judge` finds no rule tripped,
 * at any minute of the hour and with any thresholds, when the country's limits come from a reading
 * of earlier in the same hour (verifications since only add) or from none (the floors).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { judge, sureLimitsFor } from '../../middleware/pumping/pumping-decision.ts';
import { startKeys } from '../../middleware/pumping/pumping-keys.ts';
import { DEFAULT_THRESHOLDS, type PumpingThresholds } from '../../middleware/pumping/pumping-rules.ts';
import type { PumpingCount, PumpingReading, SureLimits } from '../../middleware/store/types.ts';

const HOUR = 3_600_000;
const H0 = 480_000;

const small = fc.nat({ max: 4 });
const day = fc.nat({ max: 60 });

/** A key's counts as a store reads them: verified never above sent, the day holding both hours. */
const count = fc
  .record({
    sT: small,
    vT: small,
    sL: small,
    vL: small,
    earlier: day,
    vEarlier: day,
    best: day,
    rT: small,
    rL: small,
  })
  .map(({ sT, vT, sL, vL, earlier, vEarlier, best, rT, rL }): PumpingCount => {
    const verifiedThisHour = Math.min(vT, sT);
    const verifiedLastHour = Math.min(vL, sL);
    const verifiedLastDay = verifiedThisHour + verifiedLastHour + Math.min(vEarlier, earlier);
    return {
      sentThisHour: sT,
      verifiedThisHour,
      sentLastHour: sL,
      verifiedLastHour,
      sentLastDay: sT + sL + earlier,
      verifiedLastDay,
      maxVerifiedDay: Math.max(best, verifiedLastDay),
      refusedThisHour: rT,
      refusedLastHour: rL,
    };
  });

/** The same key read earlier this hour: each verified count at most the later one's. */
const earlierOf = (later: PumpingCount) =>
  fc.record({ a: fc.nat(), b: fc.nat(), c: fc.nat(), d: fc.nat() }).map(({ a, b, c, d }): PumpingCount => ({
    ...later,
    verifiedThisHour: later.verifiedThisHour - (a % (later.verifiedThisHour + 1)),
    verifiedLastHour: later.verifiedLastHour - (b % (later.verifiedLastHour + 1)),
    verifiedLastDay: later.verifiedLastDay - (c % (later.verifiedLastDay + 1)),
    maxVerifiedDay: later.maxVerifiedDay - (d % (later.maxVerifiedDay + 1)),
  }));

const threshold = fc.record({
  dailyFloor: fc.integer({ min: 1, max: 40 }),
  hourlyFloor: fc.integer({ min: 1, max: 10 }),
  unverifiedPerVerified: fc.double({ min: 0.05, max: 1, noNaN: true }),
});
const thresholds: fc.Arbitrary<PumpingThresholds> = fc.record({
  country: threshold,
  block: threshold,
  address: threshold,
  addressCountries: fc.integer({ min: 0, max: 5 }),
});

/** SureLimits' own words, as a store checks them. */
function within(reading: PumpingReading, sure: SureLimits): boolean {
  if (reading.rules.length > 0 || reading.unverifiedCountries > sure.countries) return false;
  return reading.counts.every((c, i) => {
    const limit = sure.keys[i]!;
    const hourly = c.sentThisHour - c.verifiedThisHour + Math.max(c.sentLastHour - c.verifiedLastHour, 0);
    return (
      c.sentLastDay - c.verifiedLastDay < limit.daily &&
      hourly < limit.hourly &&
      c.refusedThisHour + c.refusedLastHour < limit.refusals
    );
  });
}

const start = startKeys('+447400123456', '203.0.113.9', 'user-1', undefined, 64);

describe('sure limits', () => {
  it('a reading within them trips no rule, whatever the minute, the thresholds and the earlier reading', () => {
    let withinCount = 0;
    fc.assert(
      fc.property(
        fc
          .array(count, { minLength: 5, maxLength: 5 })
          .chain((counts) => fc.tuple(fc.constant(counts), earlierOf(counts[0]!), fc.boolean())),
        thresholds,
        fc.integer({ min: 0, max: HOUR - 1 }),
        fc.nat({ max: 6 }),
        ([counts, earlier, useEarlier], chosen, minute, countries) => {
          const now = H0 * HOUR + minute;
          const sure = sureLimitsFor(start, chosen, useEarlier ? earlier : undefined, now);
          const reading: PumpingReading = { counts, unverifiedCountries: countries, rules: [] };
          if (!within(reading, sure)) return;
          withinCount += 1;
          expect(judge(reading, start, chosen, now).reasons).toEqual([]);
        },
      ),
      { numRuns: 3000 },
    );
    // Not vacuous: a good share of the readings drawn were within the limits.
    expect(withinCount).toBeGreaterThan(100);
  });

  it("take a busy country's room from its reading earlier this hour, where its floors alone would not let it through", () => {
    // 30 texts unverified today out of 130: below half of the 100 verified, above the floor of 20.
    const busy: PumpingCount = {
      sentThisHour: 0,
      verifiedThisHour: 0,
      sentLastHour: 0,
      verifiedLastHour: 0,
      sentLastDay: 130,
      verifiedLastDay: 100,
      maxVerifiedDay: 100,
      refusedThisHour: 0,
      refusedLastHour: 0,
    };
    const nothing = { ...busy, sentLastDay: 0, verifiedLastDay: 0, maxVerifiedDay: 0 };
    const reading: PumpingReading = {
      counts: [busy, nothing, nothing, nothing, nothing],
      unverifiedCountries: 0,
      rules: [],
    };
    const now = H0 * HOUR;
    expect(within(reading, sureLimitsFor(start, DEFAULT_THRESHOLDS, undefined, now))).toBe(false);
    expect(within(reading, sureLimitsFor(start, DEFAULT_THRESHOLDS, busy, now))).toBe(true);
    expect(judge(reading, start, DEFAULT_THRESHOLDS, now).reasons).toEqual([]);
  });
});
