/**
 * A start no rule refused gives each of its keys a headroom: how many texts and refusals other
 * checks may count under that key after its reading with the start still refused by none. The
 * PostgreSQL store counts on the reading when others counted within it, and reads again otherwise,
 * so a headroom one too large would let a text through that the rules refuse. Over many readings
 * (a fixed seed): any counts within every key's headroom, and countries within the address's,
 * leave the verdict clean, a known user's key has none, and one more than a judged key's headroom
 * (texts or refusals) or than the countries' trips one of its rules, so the headroom is no smaller
 * than it has to be.
 */
import { describe, expect, it } from 'vitest';
import { headroomOn, judge } from '../../middleware/pumping/pumping-decision.ts';
import { startKeys, type StartKeys } from '../../middleware/pumping/pumping-keys.ts';
import { DEFAULT_THRESHOLDS, type PumpingThresholds } from '../../middleware/pumping/pumping-rules.ts';
import type { PumpingCount, PumpingDimension, PumpingReading, PumpingRule } from '../../middleware/store/types.ts';

const HOUR = 3_600_000;
/** Texts a test adds to a key of no rule at most (its headroom is PostgreSQL's largest integer). */
const CAP = 40;

/** A small deterministic generator (mulberry32), so a failure repeats. */
function generator(seed: number): (below: number) => number {
  let a = seed >>> 0;
  return (below) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4_294_967_296) * below);
  };
}

function countOf(random: (below: number) => number): PumpingCount {
  const verifiedThisHour = random(6);
  const verifiedLastHour = random(6);
  const sentThisHour = verifiedThisHour + random(6);
  const sentLastHour = verifiedLastHour + random(6);
  const verifiedLastDay = verifiedThisHour + verifiedLastHour + random(30);
  const sentLastDay =
    sentThisHour + sentLastHour + (verifiedLastDay - verifiedThisHour - verifiedLastHour) + random(25);
  return {
    sentThisHour,
    verifiedThisHour,
    sentLastHour,
    verifiedLastHour,
    sentLastDay,
    verifiedLastDay,
    maxVerifiedDay: Math.max(verifiedLastDay, random(40)),
    refusedThisHour: random(8),
    refusedLastHour: random(8),
  };
}

/** A known user (verified in the last fortnight, nothing unverified today), one time in three. */
function userCountOf(random: (below: number) => number): PumpingCount {
  if (random(3) > 0) return countOf(random);
  const verified = 1 + random(3);
  return { ...countOf(random), sentLastDay: verified, verifiedLastDay: verified, maxVerifiedDay: verified };
}

/** `texts` and `refusals` more under the key, this hour. */
function plus(count: PumpingCount, texts: number, refusals: number): PumpingCount {
  return {
    ...count,
    sentThisHour: count.sentThisHour + texts,
    sentLastDay: count.sentLastDay + texts,
    refusedThisHour: count.refusedThisHour + refusals,
  };
}

const START: StartKeys = startKeys('+447400123456', '203.0.113.9', 'user-1');
const ADDRESS = 2;
const SMALL: PumpingThresholds = {
  country: { dailyFloor: 8, hourlyFloor: 3, unverifiedPerVerified: 0.5 },
  block: { dailyFloor: 6, hourlyFloor: 2, unverifiedPerVerified: 0.5 },
  address: { dailyFloor: 7, hourlyFloor: 3, unverifiedPerVerified: 0.3 },
  addressCountries: 2,
};

/** Clean readings (no rule trips) drawn from `seed`, with the time of each check. */
function cleanReadings(seed: number, thresholds: PumpingThresholds, wanted: number) {
  const random = generator(seed);
  const found: { reading: PumpingReading; now: number }[] = [];
  for (let tries = 0; found.length < wanted && tries < wanted * 200; tries++) {
    const now = 480_000 * HOUR + random(60) * 60_000;
    const counts = START.keys.map((key) => (key.dimension === 'user' ? userCountOf(random) : countOf(random)));
    const reading: PumpingReading = { counts, unverifiedCountries: random(4), rules: [] };
    if (judge(reading, START, thresholds, now).reasons.length === 0) found.push({ reading, now });
  }
  return found;
}

describe.each([
  ['the default thresholds', DEFAULT_THRESHOLDS],
  ['small thresholds', SMALL],
])('headroom of a clean check, %s', (_name, thresholds) => {
  const readings = cleanReadings(20261203, thresholds, 400);

  it('finds enough clean readings to judge', () => {
    expect(readings.length).toBe(400);
  });

  it("leaves the verdict clean for any texts and refusals others count within every key's headroom", () => {
    const random = generator(7);
    let judged = 0;
    for (const { reading, now } of readings) {
      const headroom = headroomOn(reading, START, thresholds, now);
      for (let trial = 0; trial < 20; trial++) {
        const added = headroom.keys.map((room) => {
          const total = random(Math.min(room, CAP) + 1);
          const texts = random(total + 1);
          return { texts, refusals: total - texts };
        });
        const counts = reading.counts.map((count, i) => plus(count, added[i]!.texts, added[i]!.refusals));
        // Texts from the address to countries it had not texted, within the countries' headroom.
        const countries = random(Math.min(headroom.countries, CAP) + 1);
        const later = { ...reading, counts, unverifiedCountries: reading.unverifiedCountries + countries };
        const verdict = judge(later, START, thresholds, now);
        expect(verdict.reasons, JSON.stringify({ reading, now, added })).toEqual([]);
        judged++;
      }
    }
    expect(judged).toBe(readings.length * 20);
  });

  it("gives a known user's key no headroom: another text of theirs, to any country, makes them unknown", () => {
    const known = readings.filter(({ reading }) => {
      const user = reading.counts[3]!;
      return user.maxVerifiedDay > 0 && user.sentLastDay === user.verifiedLastDay;
    });
    expect(known.length).toBeGreaterThan(20);
    for (const { reading, now } of known) expect(headroomOn(reading, START, thresholds, now).keys[3]).toBe(0);
  });

  it("trips the address-countries rule at one more country than the countries' headroom", () => {
    for (const { reading, now } of readings) {
      const { countries } = headroomOn(reading, START, thresholds, now);
      const judgedWith = (unverifiedCountries: number) =>
        judge({ ...reading, unverifiedCountries }, START, thresholds, now).reasons;
      expect(judgedWith(reading.unverifiedCountries + countries)).not.toContain('address_countries');
      expect(judgedWith(reading.unverifiedCountries + countries + 1)).toContain('address_countries');
    }
  });

  it('trips a rule of the country, the block or the address at one more than its headroom', () => {
    let tight = 0;
    for (const { reading, now } of readings) {
      const headroom = headroomOn(reading, START, thresholds, now);
      const user = reading.counts[3]!;
      const known = user.maxVerifiedDay > 0 && user.sentLastDay === user.verifiedLastDay;
      for (const index of [0, 1, 2]) {
        // A known user's country and block rules are not read: what trips them is another text of theirs.
        if (known && index !== ADDRESS) continue;
        const over = headroom.keys[index]! + 1;
        const judgedWith = (count: PumpingCount, countries = reading.unverifiedCountries) => {
          const counts = reading.counts.map((c, i) => (i === index ? count : c));
          return judge({ ...reading, counts, unverifiedCountries: countries }, START, thresholds, now).reasons;
        };
        const count = reading.counts[index]!;
        const tripped = [judgedWith(plus(count, over, 0)), judgedWith(plus(count, 0, over))];
        expect(tripped.flat().length, JSON.stringify({ reading, now, index, over })).toBeGreaterThan(0);
        tight++;
      }
    }
    expect(tight).toBeGreaterThan(readings.length);
  });
});

describe('headroom of a key no rule reads', () => {
  const LARGEST = 2_147_483_647;
  const random = generator(11);
  /** A reading whose every count is far over SMALL's thresholds: judged, each key would trip. */
  const over = (): PumpingCount => plus(countOf(random), 50, 0);
  const allow = (dimension: PumpingDimension): PumpingRule => ({
    dimension,
    key: 'k',
    rule: 'allow',
    until: 1e15,
    setAt: 0,
  });
  const now = 480_000 * HOUR;

  it('gives a key an operator released as many as any check counts, as judge does not read it', () => {
    for (const [index, dimension] of [
      [0, 'country'],
      [1, 'block'],
      [2, 'address'],
    ] as const) {
      const counts = START.keys.map((_, i) => (i === index ? over() : { ...countOf(random), sentThisHour: 0 }));
      const reading: PumpingReading = { counts, unverifiedCountries: 0, rules: [allow(dimension)] };
      expect(judge(reading, START, SMALL, now).reasons.filter((r) => r.startsWith(`${dimension}_`))).toEqual([]);
      expect(headroomOn(reading, START, SMALL, now).keys[index], dimension).toBe(LARGEST);
    }
    const released = {
      counts: START.keys.map(() => countOf(random)),
      unverifiedCountries: 9,
      rules: [allow('address')],
    };
    expect(headroomOn(released, START, SMALL, now).countries).toBe(LARGEST);
  });

  it("gives a known user's country and block as many, and their own key none", () => {
    const known = { ...countOf(random), sentLastDay: 2, verifiedLastDay: 2, maxVerifiedDay: 2 };
    const reading: PumpingReading = {
      counts: [over(), over(), countOf(random), known],
      unverifiedCountries: 0,
      rules: [],
    };
    const { keys } = headroomOn(reading, START, SMALL, now);
    expect([keys[0], keys[1], keys[3]]).toEqual([LARGEST, LARGEST, 0]);
  });

  it('gives a released user every key and the countries as many', () => {
    const reading: PumpingReading = {
      counts: START.keys.map(() => over()),
      unverifiedCountries: 9,
      rules: [allow('user')],
    };
    expect(headroomOn(reading, START, SMALL, now)).toEqual({ keys: START.keys.map(() => LARGEST), countries: LARGEST });
  });
});
