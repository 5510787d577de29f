/**
 * What operators read and do (`kit.pumping`, and the `fraud` command): the keys whose rules trip
 * now, with their counts and thresholds; texts sent and verified per country or block and day;
 * the recent decisions; and blocks and releases of a country, a number block, an address or a user.
 */
import { withDeadline, type LateRejectionReporter } from '../deadline.ts';
import { KitError, KitErrorCode } from '../errors.ts';
import { markingErrors } from '../logger.ts';
import { callsThrough } from '../store/calls-through.ts';
import {
  FEWEST_NUMBER_DIGITS,
  GROUP_MARKS,
  maskDestination,
  maskNumbersInText,
  namedUnlessNumber,
  quotedUnlessNumber,
} from '../numbers/mask-number.ts';
import type {
  PumpingDayCount,
  PumpingDecisionRecord,
  PumpingDimension,
  PumpingKey,
  PumpingRule,
  PumpingStore,
} from '../store/types.ts';
import { keyOf, type PumpingTarget } from './pumping-targets.ts';
import { hourOf, thresholdsOf, trippedBy, unverifiedOf, type PumpingThresholds } from './pumping-rules.ts';

export type { PumpingTarget } from './pumping-targets.ts';

/** A key whose rules one more text would break, as the check before a text would find it now. */
export interface TrippedKey extends PumpingKey {
  reasons: string[];
  unverifiedLastHour: number;
  unverifiedLastDay: number;
  hourlyThreshold: number;
  dailyThreshold: number;
  /** An operator's rule on it, if any. */
  rule: PumpingRule['rule'] | undefined;
}

export interface PumpingOperations {
  /**
   * Countries, blocks and addresses whose rules trip now (texted in the last 24 hours). An
   * operator's block of a key with no recent traffic is listed by rules(), not here.
   */
  tripped(): Promise<TrippedKey[]>;
  /** Texts sent and verified per country (or block) and day, over the last `days` days (default 14). */
  countsByDay(query?: { by?: 'country' | 'block'; days?: number }): Promise<PumpingDayCount[]>;
  /**
   * Decisions of the last `hours` hours (default 24), newest first, at most `limit` (default 100).
   * A userRef that is or holds a phone number is shown masked ("•• 23").
   */
  decisions(query?: { hours?: number; limit?: number }): Promise<PumpingDecisionRecord[]>;
  /** The operators' rules in force; a user's key that is or holds a phone number is shown masked. */
  rules(): Promise<PumpingRule[]>;
  /**
   * Refuses every start to the target for `hours` (default 12, as a hosted service's prefix block
   * lasts). The rule returned shows a user's key as rules() does.
   */
  block(target: PumpingTarget, hours?: number): Promise<PumpingRule>;
  /** Lifts the rules of the target for `hours` (default 24): its starts are sent whatever the counts say. */
  release(target: PumpingTarget, hours?: number): Promise<PumpingRule>;
  /** Removes an operator's block or release; true when there was one. */
  clear(target: PumpingTarget): Promise<boolean>;
}

const HOUR_MS = 3_600_000;
/** The longest an operator's rule lasts, and the oldest decisions listed: a year. */
export const MAX_HOURS = 24 * 366;
/** The days the counters keep per day. */
export const MAX_DAYS = 15;
/** The most decisions one read lists. */
export const MAX_DECISIONS = 10_000;
const JUDGED = ['country', 'block', 'address'] as const;

function notCounted(): never {
  throw new KitError(
    KitErrorCode.InvalidOptions,
    "This kit's store keeps no SMS pumping counters: use the kit's SQLite or PostgreSQL store.",
  );
}

function rulesOff(): never {
  throw new KitError(
    KitErrorCode.InvalidOptions,
    "The SMS pumping rules are off (pumping.mode: 'off'): no start reads a block or a release, so none was written. Turn them on ('record' or 'refuse') first.",
  );
}

/**
 * A value that should have been a number, as an error names it back: a string by its type too (a
 * query parameter passed as it came reads "got 48" otherwise), anything else by its type alone.
 */
function given(value: unknown): string {
  if (typeof value === 'number') return namedUnlessNumber(value);
  if (typeof value === 'string') return `the string ${quotedUnlessNumber(value)}`;
  return value === null ? 'null' : `a value of type ${typeof value}`;
}

function checkHours(hours: number): number {
  if (typeof hours !== 'number' || !Number.isFinite(hours) || hours <= 0 || hours > MAX_HOURS) {
    throw new KitError(
      KitErrorCode.InvalidOptions,
      `hours must be a positive number of hours, at most a year; got ${given(hours)}.`,
    );
  }
  return hours;
}

/** The shortest block or release: one shorter would be said done and never be read by a start. */
const SHORTEST_RULE_MS = 60_000;

/** A rule's duration in whole milliseconds (the stores keep times as integers), at least a minute. */
function ruleDurationMs(hours: number): number {
  const ms = Math.round(checkHours(hours) * HOUR_MS);
  if (ms < SHORTEST_RULE_MS) {
    throw new KitError(
      KitErrorCode.InvalidOptions,
      `A block or a release lasts at least a minute (hours at least 1/60, about 0.017); got ${given(hours)}.`,
    );
  }
  return ms;
}

/**
 * A count asked for (days, limit): a whole number from 1 to `max`, fractions cut. More than is kept
 * is refused, not cut: a page asking for 30 days would show 15 under its own heading.
 */
function checkCount(name: string, value: number, max: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 1 || value > max) {
    throw new KitError(KitErrorCode.InvalidOptions, `${name} must be a number from 1 to ${max}; got ${given(value)}.`);
  }
  return Math.trunc(value);
}

/** What counts per day are kept by, for operators: anything else would list nothing, or users and addresses. */
function checkBy(by: unknown): 'country' | 'block' {
  if (by === 'country' || by === 'block') return by;
  // A field pasted into may hold a phone number: never repeated. Anything but a string, by its type.
  const got = typeof by === 'string' ? quotedUnlessNumber(by) : `a value of type ${typeof by}`;
  throw new KitError(KitErrorCode.InvalidOptions, `by must be 'country' or 'block'; got ${got}.`);
}

/**
 * A read's options: an object, or nothing for the defaults. Anything else (null, a bare number meant
 * as the hours) is refused, never read as the defaults: a page asking for 48 hours would list 24.
 */
function checkQuery<Q extends object>(name: string, query: unknown, example: string): Partial<Q> {
  if (query === undefined) return {};
  if (typeof query === 'object' && query !== null && !Array.isArray(query)) return query as Partial<Q>;
  const got = query === null ? 'null' : Array.isArray(query) ? 'an array' : `a value of type ${typeof query}`;
  throw new KitError(
    KitErrorCode.InvalidOptions,
    `kit.pumping.${name}() takes an object such as ${example}, or nothing for the defaults; got ${got}.`,
  );
}

/** The store's own list, or, from a store of the app's own without one, the keys with a text not verified or none left. */
async function keysThatMayTrip(store: PumpingStore, dimension: PumpingDimension, hour: number): Promise<string[]> {
  if (store.keysThatMayTrip !== undefined) return store.keysThatMayTrip({ dimension, hour });
  const active = await store.countsByDay({ dimension, hour, days: 1 });
  const mayTrip = (c: PumpingDayCount) => c.sent > c.verified || c.sent === 0;
  return [...new Set(active.filter(mayTrip).map((c) => c.key))];
}

/**
 * Per address, the countries it texted in the last 24 hours with none verified from it, as the
 * check before a text counts them for `address_countries`: only addresses with one or more.
 */
async function unverifiedCountries(store: PumpingStore, hour: number, now: number): Promise<Map<string, number>> {
  const keys = (await keysThatMayTrip(store, 'address_country', hour)).map((key) => ({
    dimension: 'address_country' as const,
    key,
  }));
  const byAddress = new Map<string, number>();
  if (keys.length === 0) return byAddress;
  const reading = await store.readPumping({ keys, address: '', hour, now });
  keys.forEach(({ key }, index) => {
    const count = reading.counts[index];
    if (count === undefined || count.sentLastDay === 0 || count.verifiedLastDay > 0) return;
    // "<address> <country>": a country code holds no space.
    const address = key.slice(0, key.lastIndexOf(' '));
    byAddress.set(address, (byAddress.get(address) ?? 0) + 1);
  });
  return byAddress;
}

async function trippedOf(
  store: PumpingStore,
  thresholds: PumpingThresholds,
  now: number,
  dimension: (typeof JUDGED)[number],
): Promise<TrippedKey[]> {
  const hour = hourOf(now);
  // Only these can trip: a key whose texts were all verified and that no refusal presses on trips no
  // rule, while one held by refusals refuses every start whatever its texts, and operators must see it.
  const names = new Set(await keysThatMayTrip(store, dimension, hour));
  // An address past `addressCountries` refuses every start from it, however few its texts.
  const countries = dimension === 'address' ? await unverifiedCountries(store, hour, now) : new Map<string, number>();
  for (const [address, many] of countries) if (many > thresholds.addressCountries) names.add(address);
  const keys = [...names].map((key) => ({ dimension: dimension as PumpingDimension, key }));
  if (keys.length === 0) return [];
  const reading = await store.readPumping({ keys, address: '', hour, now });
  return keys.flatMap((key, index) => {
    const count = reading.counts[index];
    if (count === undefined) return [];
    const reasons = trippedBy(dimension, count, thresholds[dimension], now);
    if ((countries.get(key.key) ?? 0) > thresholds.addressCountries) reasons.push('address_countries');
    const rule = reading.rules.find((r) => r.key === key.key)?.rule;
    if (reasons.length === 0 && rule !== 'block') return [];
    const limit = thresholdsOf(count, thresholds[dimension], now);
    const unverified = unverifiedOf(count, now);
    return [
      {
        ...key,
        reasons,
        unverifiedLastHour: Math.round(unverified.hourly * 10) / 10,
        unverifiedLastDay: unverified.daily,
        hourlyThreshold: Math.round(limit.hourly * 10) / 10,
        dailyThreshold: Math.round(limit.daily * 10) / 10,
        rule,
      },
    ];
  });
}

/** A UUID: an id whose digits, even a group of twelve, are no phone number. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A run of digits and the marks numbers are grouped with (every mark the kit reads between a typed
 * number's digits: GROUP_MARKS), glued to the rest of a key or not ("user_447700900123",
 * "user_07700-900123", "tel_+1-555-010-0001", "u.07700.900.123", "user_07700–900123"); in a key,
 * an underscore or a comma groups them too ("user_07700_900123", "tel:+44,7700,900,123").
 */
const DIGIT_RUN = new RegExp(`\\+?\\p{Nd}(?:[${GROUP_MARKS}_,]*\\p{Nd})*`, 'gu');

/** A run of digits masked when it holds as many digits as a phone number may. */
function maskedDigitRun(run: string): string {
  const digits = run.replace(/\P{Nd}/gu, '');
  return digits.length >= FEWEST_NUMBER_DIGITS ? maskDestination(digits) : run;
}

/**
 * A userRef as operators are shown it. An app may key users by their phone number (a sign-up by
 * number, a WhatsApp id, "user_<number>"): a full number appears only where the user typed it, so
 * every run of a number's digits in the ref is masked, standing alone or glued to the rest, written
 * in groups or not, while a UUID is shown whole. A store of the app's own may answer something
 * else: shown as it is.
 */
function shownUserRef<T>(userRef: T): T | string {
  if (typeof userRef !== 'string' || UUID.test(userRef)) return userRef;
  return maskNumbersInText(userRef).replace(DIGIT_RUN, maskedDigitRun);
}

function shownRule(rule: PumpingRule): PumpingRule {
  return rule.dimension === 'user' ? { ...rule, key: shownUserRef(rule.key) } : rule;
}

function shownDecision(decision: PumpingDecisionRecord): PumpingDecisionRecord {
  return { ...decision, userRef: shownUserRef(decision.userRef) };
}

/**
 * Each operation waits on the store no longer than the start's own pumping reads do
 * (hookTimeouts.limits): an admin page on a store that stopped answering gets an error, never a
 * request that hangs for good. A write that is late may still be applied: rules() tells. A store
 * that fails after the deadline has its reason told to `onLateRejection` (the kit logs it).
 */
function bounded<Args extends unknown[], T>(
  name: keyof PumpingOperations,
  timeoutMs: number,
  operation: (...args: Args) => Promise<T>,
  onLateRejection: LateRejectionReporter | undefined,
): (...args: Args) => Promise<T> {
  const late = () =>
    new KitError(
      KitErrorCode.HookFailed,
      `kit.pumping.${name}() did not get the store's answer within ${timeoutMs} ms (raise hookTimeouts.limits if the store needs longer).`,
    );
  return (...args) =>
    withDeadline(`kit.pumping.${name}()`, timeoutMs, () => operation(...args), { late, onLateRejection });
}

/** The one key a target names, as given (a non-empty string), or undefined. */
function keyAsGiven(target: PumpingTarget): PumpingKey | undefined {
  if (typeof target !== 'object' || target === null) return undefined;
  const named = (['country', 'block', 'address', 'user'] as const).filter((d) => target[d] !== undefined);
  const [dimension] = named;
  const key = dimension === undefined ? undefined : target[dimension];
  return named.length === 1 && dimension !== undefined && typeof key === 'string' && key !== ''
    ? { dimension, key }
    : undefined;
}

/**
 * Removes the rule a target names. One kept before the kit refused such a key (a block no start is
 * counted under, 'EH') is removed by its key as given, so an operator is never left waiting for
 * its end; a target the checks refuse that names no kept rule is refused as block() refuses it.
 */
async function clearNamed(store: PumpingStore, target: PumpingTarget, ipv6Subnet: number | undefined) {
  let key: PumpingKey;
  try {
    key = keyOf(target, ipv6Subnet);
  } catch (refused) {
    const given = keyAsGiven(target);
    // A key no store can hold (PostgreSQL and a NUL) fails there: the target's refusal says why.
    const cleared = given !== undefined && (await store.clearRule(given).catch(() => false));
    if (cleared) return true;
    throw refused;
  }
  return store.clearRule(key);
}

export function pumpingOperations(deps: {
  store: PumpingStore | undefined;
  thresholds: PumpingThresholds;
  /** The rules' mode (`pumping.mode`): with 'off' no start reads an operator's rule. */
  mode?: 'record' | 'refuse' | 'off';
  /** The prefix an IPv6 client is counted by: the start limits' (`limits.ipv6Subnet`); default 64. */
  ipv6Subnet?: number;
  now: () => number;
  /** How long each operation waits on the store: hookTimeouts.limits. */
  timeoutMs: number;
  /** Told why the store failed after an operation's deadline. */
  onLateRejection?: LateRejectionReporter;
}): PumpingOperations {
  // A KitError of a store of the app's own is in its words (it may name a user): logged masked.
  const marked = deps.store === undefined ? undefined : callsThrough(deps.store, (_name, call) => markingErrors(call));
  const store = (): PumpingStore => marked ?? notCounted();
  const setRule = async (target: PumpingTarget, rule: 'allow' | 'block', hours: number) => {
    const key = keyOf(target, deps.ipv6Subnet);
    // Kept, it would be said to be in force while every start to it is sent.
    if (deps.mode === 'off') rulesOff();
    const now = deps.now();
    const set: PumpingRule = { ...key, rule, until: now + ruleDurationMs(hours), setAt: now };
    await store().setRule(set);
    return shownRule(set);
  };
  const within = <Args extends unknown[], T>(name: keyof PumpingOperations, op: (...args: Args) => Promise<T>) =>
    bounded(name, deps.timeoutMs, op, deps.onLateRejection);
  return {
    tripped: within('tripped', async () => {
      const now = deps.now();
      const found = await Promise.all(JUDGED.map((d) => trippedOf(store(), deps.thresholds, now, d)));
      return found.flat();
    }),
    // Async, so a refused argument rejects as a store's failure would, never throws at the call.
    countsByDay: within('countsByDay', async (query?: { by?: 'country' | 'block'; days?: number }) => {
      const { by = 'country', days = 14 } = checkQuery<NonNullable<typeof query>>(
        'countsByDay',
        query,
        "{ by: 'block', days: 7 }",
      );
      return store().countsByDay({
        dimension: checkBy(by),
        hour: hourOf(deps.now()),
        days: checkCount('days', days, MAX_DAYS),
      });
    }),
    decisions: within('decisions', async (query?: { hours?: number; limit?: number }) => {
      const { hours = 24, limit = 100 } = checkQuery<NonNullable<typeof query>>(
        'decisions',
        query,
        '{ hours: 48, limit: 500 }',
      );
      const decisions = await store().listDecisions({
        since: deps.now() - Math.round(checkHours(hours) * HOUR_MS),
        limit: checkCount('limit', limit, MAX_DECISIONS),
      });
      return decisions.map(shownDecision);
    }),
    rules: within('rules', async () => (await store().listRules(deps.now())).map(shownRule)),
    block: within('block', (target: PumpingTarget, hours = 12) => setRule(target, 'block', hours)),
    release: within('release', (target: PumpingTarget, hours = 24) => setRule(target, 'allow', hours)),
    clear: within('clear', (target: PumpingTarget) => clearNamed(store(), target, deps.ipv6Subnet)),
  };
}
