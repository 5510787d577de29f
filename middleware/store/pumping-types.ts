/** The store contract's SMS pumping counters: keys, counts, rules, decisions and the PumpingStore (store/types.ts). */

/** What the SMS pumping counters count texts by: one key in each, per start. */
export type PumpingDimension = 'country' | 'block' | 'address' | 'user' | 'address_country';

/** One counter key: a country code, a number block, a client address (IPv6 per prefix), a userRef. */
export interface PumpingKey {
  dimension: PumpingDimension;
  key: string;
}

/** Texts sent and verified under one key, in hourly buckets, as of the hour asked about. */
export interface PumpingCount {
  sentThisHour: number;
  verifiedThisHour: number;
  sentLastHour: number;
  verifiedLastHour: number;
  /** The 24 hourly buckets up to and including this hour. */
  sentLastDay: number;
  verifiedLastDay: number;
  /** The most verified in any of the last 14 rolling days (24 buckets each, this one included). */
  maxVerifiedDay: number;
  /** Starts refused, or let through only by the challenge, because this key's rules tripped, this hour and the one before. */
  refusedThisHour: number;
  refusedLastHour: number;
}

/** An operator's rule on one key: always allow it (a release) or refuse every start to it, until `until`. */
export interface PumpingRule extends PumpingKey {
  rule: 'allow' | 'block';
  until: number;
  setAt: number;
}

/** What the pumping check reads before a text, in one call. */
export interface PumpingReading {
  /** In the order of the keys asked about. */
  counts: PumpingCount[];
  /** Distinct countries the address texted in the last 24 hours without one verification from it. */
  unverifiedCountries: number;
  /** The live operator rules on any of the keys asked about. */
  rules: PumpingRule[];
}

/**
 * How far the counts may move after a reading with a check's answer still the one that reading
 * gives: what a store that counts on a reading others may count after can accept, so a check far
 * below every threshold is not read again because a concurrent one counted first.
 */
export interface Headroom {
  /** Per key, in the keys' order: how many more texts and refusals other checks may count under it. */
  keys: readonly number[];
  /** How many more countries the address may text without a verification (PumpingReading.unverifiedCountries). */
  countries: number;
}

/**
 * What a check counts with its reading: the start's text (it goes on), or a refusal under the keys
 * whose rules refused it or that its challenge presses on (none: nothing is counted). A text's
 * `headroom` is absent (or 0) where any count since the reading may change its answer.
 */
export type CountedByCheck = { count: 'text'; headroom?: Headroom } | { count: 'refusal'; keys: readonly PumpingKey[] };

/**
 * Limits below which a check's answer is known before it is read: the start's text. They hold when
 * no live rule names one of its keys, its address has texted at most `countries` countries without
 * a verification, and under each key (in the keys' order) the texts not verified of the last 24
 * hours stay below `daily`, those of this hour and the whole hour before below `hourly`, and the
 * refusals of both hours below `refusals`.
 */
export interface SureLimits {
  keys: readonly { daily: number; hourly: number; refusals: number }[];
  countries: number;
}

/** One pumping decision, recorded for operators. */
export interface PumpingDecisionRecord {
  decidedAt: number;
  /** warned: a rule tripped and the start went on (record mode); refused; challenged: passed the app's challenge. */
  decision: 'warned' | 'refused' | 'challenged';
  /** The rules that tripped, e.g. country_hourly, block_daily, address_countries, blocked. */
  reasons: string[];
  country: string;
  block: string;
  address: string;
  userRef: string;
}

/** Texts sent and verified per key and day, for operators' reads. */
export interface PumpingDayCount {
  key: string;
  /** Days back from the hour asked about: 0 is the last 24 hours. */
  daysAgo: number;
  sent: number;
  verified: number;
}

/**
 * The SMS pumping counters, shared by every instance that uses the store: texts sent and verified
 * per key and hour, each send's keys (so a verification moves the counts it was counted in), the
 * decisions and the operators' rules. Bounded: `purgePumping` deletes what is older than the
 * windows read.
 */
export interface PumpingStore {
  /** The counts of every key at `hour` (ms since the epoch / 3,600,000), the address's unverified countries, the live rules. */
  readPumping(query: {
    keys: readonly PumpingKey[];
    address: string;
    hour: number;
    now: number;
  }): Promise<PumpingReading>;
  /**
   * The check before a text: reads as readPumping does, asks `decide` what the reading counts, and
   * counts it in the same atomic unit: the start's text under every key in `hour` when it goes on,
   * else one refusal under each key `decide` names (what holds a key). Concurrent callers, on any
   * instance, are serialised, so each reads what those before it counted (or, within a text's
   * `headroom`, what leaves its answer as it is; a refusal may stand on a reading that others'
   * counts since only made more refused), and a start refused counts no text another could read. `decide` is pure and may be called again with a newer reading (a store that retries when a
   * concurrent check counted first); the reading returned is the one its last answer was given on.
   * With `sure`, a store a round trip away may count the text in its reading's own step when the
   * reading is within them; it still asks `decide`, and undoes that count if decide answers otherwise.
   */
  reserveSend(
    query: {
      keys: readonly PumpingKey[];
      address: string;
      hour: number;
      now: number;
      sure?: SureLimits;
    },
    decide: (reading: PumpingReading) => CountedByCheck,
  ): Promise<PumpingReading>;
  /** Gives back a text reserveSend counted and that was never sent (never below 0). */
  releaseSend(send: { keys: readonly PumpingKey[]; hour: number }): Promise<void>;
  /** Records the send of a reserved text (its session), so markVerified counts under its keys and hour; counts nothing. */
  attachSend(send: { sessionId: string; keys: readonly PumpingKey[]; hour: number }): Promise<void>;
  /**
   * Counts one text sent (its session) under every key, in the hour given; a session counted already
   * counts nothing more. The kit's starts count theirs with reserveSend; this counts a text sent
   * otherwise (history loaded from elsewhere).
   */
  recordSend(send: { sessionId: string; keys: readonly PumpingKey[]; hour: number }): Promise<void>;
  /** The session's text was verified: counted under the keys and hour of its send, once. True when this call counted it. */
  markVerified(sessionId: string): Promise<boolean>;
  /**
   * Counts verified, as markVerified would, the texts of attempts fulfilled at or after `since`
   * that are still counted unverified (their count failed), at most `limit`; returns how many. The
   * sweep's repair of a count a store error lost. Left out: such a text stays unverified.
   */
  countFulfilledSends?(query: { since: number; limit: number }): Promise<number>;
  /** Records a decision (the check counted its refusal, if any). */
  recordDecision(decision: PumpingDecisionRecord): Promise<void>;
  /** Decisions at or after `since`, newest first. */
  listDecisions(query: { since: number; limit: number }): Promise<PumpingDecisionRecord[]>;
  /** Sets (or replaces) an operator's rule on one key. */
  setRule(rule: PumpingRule): Promise<void>;
  /** Removes an operator's rule; true when there was one. */
  clearRule(key: PumpingKey): Promise<boolean>;
  /** The live rules (until after `now`). */
  listRules(now: number): Promise<PumpingRule[]>;
  /**
   * The keys of `dimension` whose rules may trip at `hour`: a text of the last 24 hours not verified,
   * a start refused in this hour or the one before (what holds a key, its texts verified or not), or
   * no text left. The others trip nothing, so operators' reads judge only these. Left out: the keys
   * with a text not verified or none left (a key held while its texts were all verified is missed).
   */
  keysThatMayTrip?(query: { dimension: PumpingDimension; hour: number }): Promise<string[]>;
  /** Sent and verified per key of `dimension` and day, over `days` days back from `hour`. */
  countsByDay(query: { dimension: PumpingDimension; hour: number; days: number }): Promise<PumpingDayCount[]>;
  /** Deletes counts and sends from hours before `beforeHour`, decisions before `decisionsBefore`, ended rules; up to `limit` rows of each. */
  purgePumping(query: { beforeHour: number; decisionsBefore: number; now: number; limit: number }): Promise<number>;
}
