/**
 * One policy of the pumping phase over the simulated month: the budgets alone, Authgear's rules as
 * written, the kit's rules (`judge`), or the kit's rules with the app's challenge, each start
 * counted as the kit's stores count it, and what the attack got through.
 */
import { DEFAULT_SMS_PRICES } from '../../emulator/config/sms-prices.ts';
import { judge, keysRefusedBy } from '../../middleware/pumping/pumping-decision.ts';
import { blockOf, type StartKeys } from '../../middleware/pumping/pumping-keys.ts';
import { DEFAULT_THRESHOLDS, isHold, type Thresholds } from '../../middleware/pumping/pumping-rules.ts';
import type { PumpingCount, PumpingKey } from '../../middleware/store/types.ts';
import { Budgets, Counters } from './pumping-counters.ts';
import { HOUR_MS, random, VERIFY_LAG_MS, type AttackShape, type StartEvent } from './pumping-model.ts';

export const SEED = 61;
/** A Monday at midnight UTC: the month's first day. */
export const START = Date.UTC(2026, 0, 5);

export type Policy = 'budgets' | 'authgear' | 'kit' | 'challenge';
export const POLICIES: readonly Policy[] = ['budgets', 'authgear', 'kit', 'challenge'];
/**
 * Real users who pass the app's challenge (a CAPTCHA's own failures and people who give up are the
 * rest). The attack passes every one: a solving service costs it a fraction of a cent a start.
 */
const REAL_USERS_PASS = 0.95;

const AUTHGEAR = {
  country: { dailyFloor: 20, hourlyFloor: 3, unverifiedPerVerified: 0.2 } satisfies Thresholds,
  address: { dailyFloor: 10, hourlyFloor: 5, unverifiedPerVerified: 0.2 } satisfies Thresholds,
};

/**
 * Authgear's rule on one key as written, kept here so the baseline never moves with the kit's
 * rules: daily = max(floor, 0.2 x the 14-day max of verified, 0.2 x verified in 24 h), hourly =
 * max(floor, daily / 6, 0.2 x verified in the last hour), against texts unverified in each window
 * (the last hour as the kit reads it: this bucket and the share of the previous one still inside).
 */
function authgearTrips(count: PumpingCount, rule: Thresholds, now: number): boolean {
  const share = rule.unverifiedPerVerified;
  const inside = 1 - (now % HOUR_MS) / HOUR_MS;
  const verifiedHour = count.verifiedThisHour + count.verifiedLastHour * inside;
  const sentHour = count.sentThisHour + count.sentLastHour * inside;
  const daily = Math.max(rule.dailyFloor, share * count.maxVerifiedDay, share * count.verifiedLastDay);
  const hourly = Math.max(rule.hourlyFloor, daily / 6, share * verifiedHour);
  return sentHour - verifiedHour >= hourly || count.sentLastDay - count.verifiedLastDay >= daily;
}

/** The kit's keys of one start of the model, in the order the stores read them (StartKeys.keys). */
export function keysOf(event: StartEvent): StartKeys {
  const block = blockOf(event.number);
  return {
    e164: event.number,
    country: event.country,
    block,
    address: event.address,
    userRef: event.user,
    keys: [
      { dimension: 'country', key: event.country },
      { dimension: 'block', key: block },
      { dimension: 'address', key: event.address },
      { dimension: 'user', key: event.user },
      { dimension: 'address_country', key: `${event.address} ${event.country}` },
    ],
  };
}

/** The model's counter of one key. */
const counterOf = (key: PumpingKey) => `${key.dimension}:${key.key}`;
/** The keys the model counts sends under (the address's countries are kept apart, per address). */
const COUNTED = 4;

/** The reasons the policy's rules refuse this start for, given the counts before it (none: sent). */
function refusals(policy: Policy, counters: Counters, event: StartEvent, start: StartKeys, hour: number): string[] {
  if (policy === 'budgets') return [];
  const counts = start.keys.slice(0, COUNTED).map((key) => counters.buckets(counterOf(key), hour).count(hour));
  const unverifiedCountries = counters.unverifiedCountries(event.address, hour);
  if (policy === 'authgear') {
    const [country, , address] = counts as [PumpingCount, PumpingCount, PumpingCount];
    const refused =
      authgearTrips(country, AUTHGEAR.country, event.at) ||
      authgearTrips(address, AUTHGEAR.address, event.at) ||
      unverifiedCountries > 3;
    return refused ? ['authgear'] : [];
  }
  return judge({ counts, unverifiedCountries, rules: [] }, start, DEFAULT_THRESHOLDS, event.at).reasons;
}

/** Whether the challenge lets a start the rules tripped on through: never on a held key, as the kit's guard. */
function passesChallenge(policy: Policy, event: StartEvent, reasons: string[], passes: () => number): boolean {
  if (policy !== 'challenge' || reasons.some(isHold)) return false;
  return event.attack || passes() < REAL_USERS_PASS;
}

export interface RunFigures {
  attackTexts: number;
  attackCost: number;
  /** Minutes from the attack's first start to its first refused one; null: never refused. */
  minutesToContain: number | null;
  legitimate: number;
  legitimateRefused: number;
  /** Legitimate starts offered the challenge (passed or not). */
  legitimateChallenged: number;
  /** In the attacked country (and, for a block attack, in its block). */
  attackedCountryRefused: number;
  attackedBlockRefused: number;
}

const price = (country: string) => DEFAULT_SMS_PRICES.countries[country] ?? DEFAULT_SMS_PRICES.default;
export const round = (n: number, places = 2) => Math.round(n * 10 ** places) / 10 ** places;

/** Minutes from the attack's first start to its first refused one (its first trip); null: never refused. */
function containment(attack: StartEvent[], sent: boolean[]): number | null {
  const first = sent.indexOf(false);
  if (first < 0 || attack.length === 0) return null;
  return round((attack[first]!.at - attack[0]!.at) / 60_000, 1);
}

/** One policy over the month with one attack (or none); `observe` sees each start's reasons (none: not refused by the rules). */
export function runPolicy(
  policy: Policy,
  events: StartEvent[],
  shape: AttackShape | undefined,
  observe?: (reasons: string[]) => void,
): RunFigures {
  const counters = new Counters();
  const budgets = new Budgets();
  const passes = random(SEED ^ 0xc4a1);
  const pending: { at: number; verify: () => void }[] = [];
  let next = 0;
  const attackEvents: StartEvent[] = [];
  const attackSent: boolean[] = [];
  const figures = {
    attackTexts: 0,
    attackCost: 0,
    legitimate: 0,
    legitimateRefused: 0,
    legitimateChallenged: 0,
    attackedCountryRefused: 0,
    attackedBlockRefused: 0,
  };
  for (const event of events) {
    // Codes entered before this start count before it (they come back in time order: a fixed lag).
    while (next < pending.length && pending[next]!.at <= event.at) pending[next++]!.verify();
    const hour = Math.floor((event.at - START) / HOUR_MS);
    const start = keysOf(event);
    const reasons = refusals(policy, counters, event, start, hour);
    observe?.(reasons);
    const challenged = reasons.length > 0 && policy === 'challenge';
    const sent = (reasons.length === 0 || passesChallenge(policy, event, reasons, passes)) && budgets.allows(event);
    // As the kit's stores do: a refusal, or a challenge, counts under the keys whose own rules tripped.
    if (policy === 'kit' || policy === 'challenge') {
      for (const key of keysRefusedBy(start, reasons)) counters.buckets(counterOf(key), hour).at(hour).refused += 1;
    }
    if (sent) {
      const verify = counters.send(start.keys.slice(0, COUNTED).map(counterOf), event.address, event.country, hour);
      if (event.converts) pending.push({ at: event.at + VERIFY_LAG_MS, verify });
    }
    if (event.attack) {
      attackEvents.push(event);
      attackSent.push(sent);
      if (sent) {
        figures.attackTexts += 1;
        figures.attackCost += price(event.country);
      }
      continue;
    }
    figures.legitimate += 1;
    if (challenged) figures.legitimateChallenged += 1;
    if (sent) continue;
    figures.legitimateRefused += 1;
    if (shape !== undefined && event.country === shape.country) figures.attackedCountryRefused += 1;
    if (shape?.block !== undefined && start.block === shape.block) figures.attackedBlockRefused += 1;
  }
  return { ...figures, attackCost: round(figures.attackCost), minutesToContain: containment(attackEvents, attackSent) };
}
