/**
 * What an SMS pumping attack looks like to the counters, as thresholds: texts never verified, per
 * phone country and per number block (hourly and daily), per client address, and the countries one
 * address texts without a verification. The thresholds learn from the verified traffic the same
 * counters hold, so a country the app texts a lot gets room in proportion, and one it never texts
 * keeps the floors. Pure: the counts come in, the tripped rules go out.
 */
import type { PumpingCount } from '../store/types.ts';

/**
 * A number block is the E.164 number without its last three digits: 1,000 adjacent numbers, the
 * unit ranges are assigned and leased in (North America pools numbers in blocks of 1,000), so an
 * attack on "adjacent numbers" lands in one or a few blocks, while an app's real users almost never
 * share one. Refusing a block leaves the rest of its country open.
 */
export const BLOCK_DIGITS = 3;

/** The floors and the share of verified traffic a key may leave unverified. */
export interface Thresholds {
  /** Unverified texts a key may have in 24 hours whatever its history. */
  dailyFloor: number;
  /** Unverified texts a key may have in the last hour whatever its history. */
  hourlyFloor: number;
  /**
   * Unverified texts allowed per verified one. Authgear uses 0.2, which trips a country whose
   * conversion is below 83 %; real users convert at 75 to 95 %, an attack at under 5 %: 0.5 keeps
   * every real country below it (a conversion of 67 % or more) and every attack far above it.
   */
  unverifiedPerVerified: number;
}

/** The rules' thresholds, per kind of key (each a floor for a key with no history). */
export interface PumpingThresholds {
  country: Thresholds;
  block: Thresholds;
  address: Thresholds;
  /** More distinct countries than this texted from one address in 24 hours, none verified from it, trips it. */
  addressCountries: number;
}

export const DEFAULT_THRESHOLDS: PumpingThresholds = {
  // Authgear's floors for a phone country.
  country: { dailyFloor: 20, hourlyFloor: 3, unverifiedPerVerified: 0.5 },
  // A block of 1,000 numbers: real traffic to one is a few texts a day at most.
  block: { dailyFloor: 6, hourlyFloor: 3, unverifiedPerVerified: 0.5 },
  // Authgear's floors for an IP address (hourly: the daily threshold's sixth, at least 5).
  address: { dailyFloor: 10, hourlyFloor: 5, unverifiedPerVerified: 0.5 },
  addressCountries: 3,
};

/**
 * A key stays refused while starts to it are refused or challenged at this multiple of its hourly
 * threshold (over the last 60 minutes). Its real users are held back at most at their own pace,
 * which the threshold is already a share of (a half of those verified, and no less than a sixth of
 * a day's): only an attack presses this hard. Without it a tripped key reopens as its hour slides
 * by, and an attack gets a few texts through each time. A held key is refused without the
 * challenge: one an attacker passes (a solving service) must not reopen it.
 */
const HOLD_PRESSURE = 3;

const HOUR_MS = 3_600_000;

/** The hour bucket of a time (ms since the epoch): what the counters are kept by. */
export function hourOf(now: number): number {
  return Math.floor(now / HOUR_MS);
}

/**
 * The last 60 minutes, from two hourly buckets: this one whole, and the share of the previous one
 * the window still covers (as if its texts were spread evenly). It trips as soon as a rolling
 * window would, without a bucket per minute.
 */
function lastSixtyMinutes(thisHour: number, previousHour: number, now: number): number {
  const elapsed = (now % HOUR_MS) / HOUR_MS;
  return thisHour + previousHour * (1 - elapsed);
}

/** The daily and hourly thresholds of a key with these counts (Authgear's formulas, with this key's share). */
export function thresholdsOf(count: PumpingCount, rule: Thresholds, now: number): { daily: number; hourly: number } {
  const share = rule.unverifiedPerVerified;
  const daily = Math.max(rule.dailyFloor, share * count.maxVerifiedDay, share * count.verifiedLastDay);
  const verifiedHour = lastSixtyMinutes(count.verifiedThisHour, count.verifiedLastHour, now);
  const hourly = Math.max(rule.hourlyFloor, daily / 6, share * verifiedHour);
  return { daily, hourly };
}

/** Texts of the key not verified (yet): in the last 24 hours, and in the last 60 minutes. */
export function unverifiedOf(count: PumpingCount, now: number): { daily: number; hourly: number } {
  const sent = lastSixtyMinutes(count.sentThisHour, count.sentLastHour, now);
  const verified = lastSixtyMinutes(count.verifiedThisHour, count.verifiedLastHour, now);
  return { daily: count.sentLastDay - count.verifiedLastDay, hourly: sent - verified };
}

/**
 * Which of a key's rules one more text would break: `<kind>_daily` when its unverified texts of
 * the last 24 hours have reached the daily threshold, `<kind>_hourly` for the last 60 minutes, `<kind>_held` while starts press on it (HOLD_PRESSURE).
 */
export function trippedBy(kind: string, count: PumpingCount, rule: Thresholds, now: number): string[] {
  const limit = thresholdsOf(count, rule, now);
  const unverified = unverifiedOf(count, now);
  const refused = lastSixtyMinutes(count.refusedThisHour, count.refusedLastHour, now);
  const reasons: string[] = [];
  if (unverified.hourly >= limit.hourly) reasons.push(`${kind}_hourly`);
  if (unverified.daily >= limit.daily) reasons.push(`${kind}_daily`);
  if (refused >= HOLD_PRESSURE * limit.hourly) reasons.push(`${kind}_held`);
  return reasons;
}

/** The count with `texts` more sent and `refusals` more refused this hour. */
function withMore(count: PumpingCount, texts: number, refusals: number): PumpingCount {
  return {
    ...count,
    sentThisHour: count.sentThisHour + texts,
    sentLastDay: count.sentLastDay + texts,
    refusedThisHour: count.refusedThisHour + refusals,
  };
}

/** More than any check counts in an hour, and less than 2^53 (where n - 1 is still another number). */
const MOST_HEADROOM = 2_147_483_647;

/**
 * The most n (from 0 to one over `estimate`, at most MOST_HEADROOM) for which `trips(n)` is false:
 * the estimate is worked out in fractions, and trippedBy decides, so one step may separate them
 * either way; a few steps down bound the search whatever the thresholds (0 past them).
 */
function mostBelow(estimate: number, trips: (n: number) => boolean): number {
  const from = Math.min(Math.max(0, estimate + 1), MOST_HEADROOM);
  for (let n = from; n > 0 && n >= from - 3; n--) if (!trips(n)) return n;
  return 0;
}

/**
 * How many more texts or refusals other checks may count under a key (this hour) with none of its
 * rules tripping on these counts: a text adds one to both unverified windows, a refusal one to the
 * press. Verifications only raise the thresholds and lower the unverified counts. 0 when a rule
 * trips already, or would at one more.
 */
export function headroomOf(count: PumpingCount, rule: Thresholds, now: number): number {
  const limit = thresholdsOf(count, rule, now);
  const unverified = unverifiedOf(count, now);
  const refused = lastSixtyMinutes(count.refusedThisHour, count.refusedLastHour, now);
  const below = (threshold: number, value: number) => Math.ceil(threshold - value) - 1;
  const trips = (texts: number, refusals: number) =>
    trippedBy('', withMore(count, texts, refusals), rule, now).length > 0;
  const texts = mostBelow(Math.min(below(limit.hourly, unverified.hourly), below(limit.daily, unverified.daily)), (n) =>
    trips(n, 0),
  );
  const refusals = mostBelow(below(HOLD_PRESSURE * limit.hourly, refused), (n) => trips(0, n));
  return Math.min(texts, refusals);
}

/** A key with nothing counted: its thresholds are the floors. */
const NOTHING_COUNTED: PumpingCount = {
  sentThisHour: 0,
  verifiedThisHour: 0,
  sentLastHour: 0,
  verifiedLastHour: 0,
  sentLastDay: 0,
  verifiedLastDay: 0,
  maxVerifiedDay: 0,
  refusedThisHour: 0,
  refusedLastHour: 0,
};

/**
 * Limits under which none of a key's rules trips (SureLimits' per key), from counts of the key read
 * earlier in the same hour, or none (the floors): within an hour a key's thresholds only grow, as
 * verifications only add. They bound the last 60 minutes by this hour and the whole hour before,
 * so they hold at any minute of the hour.
 */
export function sureLimitsOf(
  earlier: PumpingCount | undefined,
  rule: Thresholds,
  now: number,
): { daily: number; hourly: number; refusals: number } {
  const limit = thresholdsOf(earlier ?? NOTHING_COUNTED, rule, now);
  return { daily: limit.daily, hourly: limit.hourly, refusals: HOLD_PRESSURE * limit.hourly };
}

/** A reason that holds its key (`<kind>_held`): no challenge lets such a start through. */
export function isHold(reason: string): boolean {
  return reason.endsWith('_held');
}
