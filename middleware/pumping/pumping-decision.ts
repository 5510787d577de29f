/**
 * The decision before a text, from what the counters read: which rules one more text would break,
 * and whether an operator blocked one of its keys. Operators' releases lift a key's rules; their
 * blocks refuse whatever the counts say. Pure.
 */
import type { Headroom, PumpingCount, PumpingKey, PumpingReading, PumpingRule, SureLimits } from '../store/types.ts';
import type { StartKeys } from './pumping-keys.ts';
import { headroomOf, sureLimitsOf, trippedBy, type PumpingThresholds } from './pumping-rules.ts';

export interface Verdict {
  /** The rules tripped (country_hourly, block_daily, address_countries, blocked, ...); empty when none. */
  reasons: string[];
  /** An operator blocked one of the start's keys: refused in every mode. */
  blocked: boolean;
}

/** The kinds of key with thresholds, in the order the counters come back (StartKeys.keys). */
const JUDGED = ['country', 'block', 'address'] as const;
/** Where the user's count comes back (StartKeys.keys). */
const USER_INDEX = 3;

/**
 * A user who entered a code in the last 14 days and has no text left unverified in the last 24
 * hours. The country and block rules do not hold them back: an attacker's accounts never enter a
 * code, and such a user can have one unverified text a day at most before the rules hold them too.
 */
function knownUser(count: PumpingCount | undefined): boolean {
  if (count === undefined) return false;
  return count.maxVerifiedDay > 0 && count.sentLastDay === count.verifiedLastDay;
}

/**
 * The operator's rule on the start's key of this kind, if any (a reading holds the rules of the
 * start's keys only). A function of the module, not a closure made at every start: run through
 * tsx, each named closure costs a defineProperty.
 */
function ruleOn(rules: readonly PumpingRule[], dimension: string): PumpingRule['rule'] | undefined {
  for (const rule of rules) if (rule.dimension === dimension) return rule.rule;
  return undefined;
}

export function judge(reading: PumpingReading, start: StartKeys, thresholds: PumpingThresholds, now: number): Verdict {
  const { counts, rules } = reading;
  const blocked = rules.some((r) => r.rule === 'block');
  const reasons: string[] = blocked ? ['blocked'] : [];
  // A released user has no counts rules of their own: the release lifts every rule their start trips.
  if (ruleOn(rules, 'user') === 'allow') return { reasons, blocked };
  const known = knownUser(counts[USER_INDEX]);
  JUDGED.forEach((kind, index) => {
    const count = counts[index];
    if (count === undefined || ruleOn(rules, kind) === 'allow' || (known && kind !== 'address')) return;
    reasons.push(...trippedBy(kind, count, thresholds[kind], now));
  });
  if (ruleOn(rules, 'address') !== 'allow' && reading.unverifiedCountries > thresholds.addressCountries) {
    reasons.push('address_countries');
  }
  return { reasons, blocked };
}

/** As many as any check counts: PostgreSQL's largest integer, where the store compares them. */
const NO_RULE_READS_IT = 2_147_483_647;

/**
 * The headroom of a start no rule refused on `reading` (Headroom). Each key's, in the order of
 * `start.keys`: the country, block and address as judged; no limit on a key `judge` does not read
 * (one an operator released; a known user's country and block, as only their own key can end them
 * being known, and it has no headroom: another text of theirs, to any country, makes them
 * unknown); the address with its country is read by no rule of its own, nor is an unknown user's
 * key (their texts keep them so). The countries the address may still text unverified are the
 * address-countries rule's. A released user is judged by no count at all.
 */
export function headroomOn(
  reading: PumpingReading,
  start: StartKeys,
  thresholds: PumpingThresholds,
  now: number,
): Headroom {
  const { counts, rules } = reading;
  if (ruleOn(rules, 'user') === 'allow') return anyCount(start);
  const known = knownUser(counts[USER_INDEX]);
  const keys = start.keys.map((key, index) => {
    const count = counts[index];
    if (count === undefined) return 0;
    switch (key.dimension) {
      case 'country':
      case 'block':
      case 'address':
        if (ruleOn(rules, key.dimension) === 'allow' || (known && key.dimension !== 'address')) return NO_RULE_READS_IT;
        return headroomOf(count, thresholds[key.dimension], now);
      case 'user':
        return known ? 0 : NO_RULE_READS_IT;
      default:
        return NO_RULE_READS_IT;
    }
  });
  const countries =
    ruleOn(rules, 'address') === 'allow'
      ? NO_RULE_READS_IT
      : Math.floor(thresholds.addressCountries - reading.unverifiedCountries);
  return { keys, countries: Math.min(Math.max(0, countries), NO_RULE_READS_IT) };
}

/**
 * The headroom of a start whose answer no count can change (a warned start in record mode, a
 * released user): others may count anything before it counts, and it is not read again for them.
 */
export function anyCount(start: StartKeys): Headroom {
  return { keys: start.keys.map(() => NO_RULE_READS_IT), countries: NO_RULE_READS_IT };
}

const NO_LIMIT = { daily: NO_RULE_READS_IT, hourly: NO_RULE_READS_IT, refusals: NO_RULE_READS_IT };

/**
 * The limits under which `judge` finds no rule tripped for this start, known before its reading
 * (SureLimits): the country's from its counts read earlier this hour (`countryEarlier`, else its
 * floors), the block's and the address's floors; no limit on the keys judge reads no rule of. A
 * released key or a known user only lifts rules, and any live rule sends the start to its reading.
 */
export function sureLimitsFor(
  start: StartKeys,
  thresholds: PumpingThresholds,
  countryEarlier: PumpingCount | undefined,
  now: number,
): SureLimits {
  const keys = start.keys.map((key) => {
    switch (key.dimension) {
      case 'country':
        return sureLimitsOf(countryEarlier, thresholds.country, now);
      case 'block':
      case 'address':
        return sureLimitsOf(undefined, thresholds[key.dimension], now);
      default:
        return NO_LIMIT;
    }
  });
  return { keys, countries: thresholds.addressCountries };
}

/** The limits of a start that goes on whatever the counts (record mode, the allow-list): only a live rule sends it to its reading. */
export function noLimits(start: StartKeys): SureLimits {
  return { keys: start.keys.map(() => NO_LIMIT), countries: NO_RULE_READS_IT };
}

/** The start's keys whose own rules refused it: a refusal counts under them, so a key an attack keeps pressing on stays refused. */
export function keysRefusedBy(start: StartKeys, reasons: readonly string[]): PumpingKey[] {
  return start.keys.filter(
    (key) =>
      (JUDGED as readonly string[]).includes(key.dimension) &&
      reasons.some((reason) => reason.startsWith(`${key.dimension}_`)),
  );
}

/**
 * The reading less the one refusal a start's own check counted under `keys` in `hour` (now
 * `hourNow`): what that start's second check judges, so its own press does not hold the key it
 * passed the challenge on. Only the others' presses since can.
 */
export function withoutOwnPress(
  reading: PumpingReading,
  start: StartKeys,
  keys: readonly PumpingKey[],
  hour: number,
  hourNow: number,
): PumpingReading {
  if (keys.length === 0 || hourNow - hour > 1) return reading;
  const counts = reading.counts.map((count, i) => {
    const key = start.keys[i];
    if (key === undefined || !keys.includes(key)) return count;
    return hour === hourNow
      ? { ...count, refusedThisHour: Math.max(0, count.refusedThisHour - 1) }
      : { ...count, refusedLastHour: Math.max(0, count.refusedLastHour - 1) };
  });
  return { ...reading, counts };
}
