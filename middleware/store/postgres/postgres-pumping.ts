/**
 * The SMS pumping counters in PostgreSQL, shared by every instance: the reading before a text and
 * its count are one statement, a send and its counts one statement, a verification's mark and its counts one
 * statement (a conditional UPDATE: it counts once, whichever instance reads the outcome first).
 */
import { pastDaysCache, type PastDaysCache } from '../past-days-cache.ts';
import { query, type PostgresDb } from './postgres-query.ts';
import type { StartWrites } from './postgres-start-writes.ts';
import type {
  PumpingCount,
  PumpingDecisionRecord,
  PumpingDimension,
  PumpingKey,
  PumpingReading,
  PumpingRule,
  PumpingStore,
} from '../types.ts';

interface RuleRow {
  dimension: PumpingDimension;
  key: string;
  rule: 'allow' | 'block';
  until: string;
  set_at: string;
}

interface DecisionRow {
  decided_at: string;
  decision: PumpingDecisionRecord['decision'];
  reasons: string[];
  country: string;
  block: string;
  address: string;
  user_ref: string;
}

/** In one order on every instance: two sends then lock the counters they share in the same order. */
function sortedKeys(keys: readonly PumpingKey[]): PumpingKey[] {
  return [...keys].sort((a, b) =>
    a.dimension === b.dimension ? (a.key < b.key ? -1 : a.key > b.key ? 1 : 0) : a.dimension < b.dimension ? -1 : 1,
  );
}

/**
 * One key's counts as the routines return them (postgres-pumping-sql.ts, KEY_COUNTS): sent and
 * verified this hour, the hour before, the last 24 hours; the most verified in one of days 1 to 13
 * (null when not asked for: kept from earlier this hour); refused this hour and the hour before.
 */
type KeyCounts = [number, number, number, number, number, number, number | null, number, number];

type ReadingRow = {
  counts: KeyCounts[];
  unverified_countries: number;
  rules: (Omit<PumpingRule, 'until' | 'setAt'> & { until: number | string; setAt: number | string })[];
  /** reserveSend's alone: each key's count this hour, this text included, as its upsert returned it. */
  sent?: number[];
};

/**
 * Each count as read, its 14-day maximum from days 1 to 13 as read now or earlier this hour and
 * the last 24 hours. With `sent` (reserveSend), this hour's texts are each key's count as its own
 * upsert returned it, less the reserved text: the last 24 hours move by as much, as they hold this
 * hour. Built in one pass, field by field: a start reads five keys.
 */
function countsOf(
  pastDays: PastDaysCache,
  keys: readonly PumpingKey[],
  hour: number,
  kept: (number | undefined)[],
  rows: readonly KeyCounts[],
  sent: readonly number[] | undefined,
): PumpingCount[] {
  const counts: PumpingCount[] = [];
  for (const [i, row] of rows.entries()) {
    const [sentThisHour, verifiedThisHour, sentLastHour, verifiedLastHour, sentLastDay, verifiedLastDay] = row;
    const [, , , , , , maxVerifiedPastDay, refusedThisHour, refusedLastHour] = row;
    const past = kept[i] ?? maxVerifiedPastDay ?? 0;
    const key = keys[i];
    if (kept[i] === undefined && key !== undefined) pastDays.set(key.dimension, key.key, hour, past);
    const before = sent === undefined ? sentThisHour : (sent[i] ?? sentThisHour) - 1;
    counts.push({
      sentThisHour: before,
      verifiedThisHour,
      sentLastHour,
      verifiedLastHour,
      sentLastDay: sentLastDay - sentThisHour + before,
      verifiedLastDay,
      maxVerifiedDay: Math.max(past, verifiedLastDay),
      refusedThisHour,
      refusedLastHour,
    });
  }
  return counts;
}

/**
 * The address's countries without a verification, less this text's country when this text alone
 * put it there: its address-with-country key had no other text in 24 hours, and no verification.
 */
function countriesBefore(
  keys: readonly PumpingKey[],
  address: string,
  counts: readonly PumpingCount[],
  unverifiedCountries: number,
): number {
  const index = keys.findIndex((k) => k.dimension === 'address_country' && k.key.startsWith(`${address} `));
  const own = counts[index];
  if (own === undefined || own.sentLastDay > 0 || own.verifiedLastDay > 0) return unverifiedCountries;
  return Math.max(0, unverifiedCountries - 1);
}

/** One reading (readPumping), or one reading with the text counted (reserveSend), as before that text. */
async function read(
  db: PostgresDb,
  pastDays: PastDaysCache,
  name: 'readPumping' | 'reserveSend',
  { keys, address, hour, now }: Parameters<PumpingStore['readPumping']>[0],
): Promise<PumpingReading> {
  const dimensions = keys.map((k) => k.dimension);
  const names = keys.map((k) => k.key);
  const kept = keys.map((k) => pastDays.get(k.dimension, k.key, hour));
  const { rows } = await query<ReadingRow>(db, name, [
    dimensions,
    names,
    hour,
    `${address} `,
    `${address}!`,
    now,
    kept.map((most) => most === undefined),
  ]);
  const [row] = rows;
  if (row === undefined) throw new Error('The pumping counters returned no row.');
  const counts = countsOf(pastDays, keys, hour, kept, row.counts, row.sent);
  const unverifiedCountries =
    row.sent === undefined
      ? row.unverified_countries
      : countriesBefore(keys, address, counts, row.unverified_countries);
  return { counts, unverifiedCountries, rules: rulesOf(row) };
}

function rulesOf(row: ReadingRow): PumpingRule[] {
  return row.rules.map((r) => ({ ...r, until: Number(r.until), setAt: Number(r.setAt) }));
}

/** What operators and the check before a text read; the check's reading may count its text too. */
function pumpingReads(
  db: PostgresDb,
): Pick<
  PumpingStore,
  'readPumping' | 'reserveSend' | 'listDecisions' | 'listRules' | 'keysThatMayTrip' | 'countsByDay'
> {
  const pastDays = pastDaysCache();
  return {
    readPumping: (reading) => read(db, pastDays, 'readPumping', reading),
    reserveSend: (reading) => read(db, pastDays, 'reserveSend', reading),
    async listDecisions({ since, limit }) {
      const { rows } = await query<DecisionRow>(db, 'listDecisions', [since, limit]);
      return rows.map((row) => ({
        decidedAt: Number(row.decided_at),
        decision: row.decision,
        reasons: row.reasons,
        country: row.country,
        block: row.block,
        address: row.address,
        userRef: row.user_ref,
      }));
    },
    async listRules(now) {
      const { rows } = await query<RuleRow>(db, 'listRules', [now]);
      return rows.map((row) => ({
        dimension: row.dimension,
        key: row.key,
        rule: row.rule,
        until: Number(row.until),
        setAt: Number(row.set_at),
      }));
    },
    async keysThatMayTrip({ dimension, hour }) {
      const { rows } = await query<{ key: string }>(db, 'keysThatMayTrip', [dimension, hour]);
      return rows.map((row) => row.key);
    },
    async countsByDay({ dimension, hour, days }) {
      const { rows } = await query<{ key: string; days_ago: number; sent: number; verified: number }>(
        db,
        'countsByDay',
        [dimension, hour, days],
      );
      return rows.map((row) => ({ key: row.key, daysAgo: row.days_ago, sent: row.sent, verified: row.verified }));
    },
  };
}

/** The pumping part of the PostgreSQL store; `attachSend` writes a send's record (startWrites). */
export function postgresPumping(db: PostgresDb, attachSend: StartWrites['attachSend']): PumpingStore {
  return {
    ...pumpingReads(db),
    // Counts may be set back by a fraction of a second in a crash, at no cost but a few texts
    // uncounted: their commits do not wait for the disk (a start would, for each of them).
    async recordSend({ sessionId, keys, hour }) {
      const sorted = sortedKeys(keys);
      const values = [sessionId, hour, sorted.map((k) => k.dimension), sorted.map((k) => k.key)];
      await query(db, 'recordSend', values);
    },
    // A row that only held this text goes with it: refused starts add no rows.
    async releaseSend({ keys, hour }) {
      const values = [hour, keys.map((k) => k.dimension), keys.map((k) => k.key)];
      await query(db, 'releaseSend', values);
      await query(db, 'dropEmptyCounts', values);
    },
    // With its attempt's insert when the start asks for both in one turn (postgres-start-writes.ts).
    attachSend({ sessionId, keys, hour }) {
      const sorted = sortedKeys(keys);
      return attachSend([sessionId, hour, sorted.map((k) => k.dimension), sorted.map((k) => k.key)]);
    },
    async markVerified(sessionId) {
      const { rows } = await query<{ marked: number }>(db, 'markVerified', [sessionId]);
      return rows[0]?.marked === 1;
    },
    async countFulfilledSends({ since, limit }) {
      const { rows } = await query<{ marked: number }>(db, 'countFulfilledSends', [since, limit]);
      return rows[0]?.marked ?? 0;
    },
    async recordDecision(d, refused) {
      const under = sortedKeys(refused?.keys ?? []);
      await query(db, 'insertDecision', [
        d.decidedAt,
        d.decision,
        d.reasons,
        d.country,
        d.block,
        d.address,
        d.userRef,
        refused?.hour ?? 0,
        under.map((k) => k.dimension),
        under.map((k) => k.key),
      ]);
    },
    async countRefused({ keys, hour }) {
      const sorted = sortedKeys(keys);
      await query(db, 'countRefused', [hour, sorted.map((k) => k.dimension), sorted.map((k) => k.key)]);
    },
    async setRule(rule) {
      await query(db, 'setRule', [rule.dimension, rule.key, rule.rule, rule.until, rule.setAt]);
    },
    async clearRule({ dimension, key }) {
      return ((await query(db, 'clearRule', [dimension, key])).rowCount ?? 0) > 0;
    },
    async purgePumping({ beforeHour, decisionsBefore, now, limit }) {
      const { rows } = await query<{ purged: number }>(db, 'purgePumping', [beforeHour, decisionsBefore, now, limit]);
      return rows[0]?.purged ?? 0;
    },
  };
}
