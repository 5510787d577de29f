/**
 * The SMS pumping counters in PostgreSQL, shared by every instance: the reading before a text, then
 * its count once decided, only if concurrent checks counted meanwhile no more than the answer's
 * headroom, else read and decided again with the counters locked; a send and its counts one
 * statement, a verification's mark and its counts one statement (a conditional UPDATE: it counts
 * once, whichever instance reads the outcome first).
 */
import { pastDaysCache, type PastDaysCache } from '../past-days-cache.ts';
import type { QueryResult, QueryResultRow } from 'pg';
import { inTransaction, query, queryOn, type PostgresDb } from './postgres-query.ts';
import type { StatementName } from './postgres-sql.ts';
import type { StartWrites } from './postgres-start-writes.ts';
import type {
  CountedByCheck,
  PumpingCount,
  PumpingDecisionRecord,
  PumpingDimension,
  PumpingKey,
  PumpingReading,
  PumpingRule,
  PumpingStore,
  SureLimits,
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
};

/**
 * Each count as read, less `own` texts this hour (the check's own, when counted before its reading),
 * its 14-day maximum from days 1 to 13 as read now or earlier this hour. Built in one pass: a start
 * reads five keys.
 */
function countsOf(
  pastDays: PastDaysCache,
  keys: readonly PumpingKey[],
  hour: number,
  kept: (number | undefined)[],
  rows: readonly KeyCounts[],
  own: number,
): PumpingCount[] {
  const counts: PumpingCount[] = [];
  for (const [i, row] of rows.entries()) {
    const [sentWithOwn, verifiedThisHour, sentLastHour, verifiedLastHour, sentLastDayWithOwn, verifiedLastDay] = row;
    const sentThisHour = sentWithOwn - own;
    const sentLastDay = sentLastDayWithOwn - own;
    const [, , , , , , maxVerifiedPastDay, refusedThisHour, refusedLastHour] = row;
    const past = kept[i] ?? maxVerifiedPastDay ?? 0;
    const key = keys[i];
    if (kept[i] === undefined && key !== undefined) pastDays.set(key.dimension, key.key, hour, past);
    counts.push({
      sentThisHour,
      verifiedThisHour,
      sentLastHour,
      verifiedLastHour,
      sentLastDay,
      verifiedLastDay,
      maxVerifiedDay: Math.max(past, verifiedLastDay),
      refusedThisHour,
      refusedLastHour,
    });
  }
  return counts;
}

type ReadingQuery = Parameters<PumpingStore['readPumping']>[0];

/** The reading's parameters ($1 to $7), and each key's 14-day maximum kept from earlier this hour. */
function readingParameters(pastDays: PastDaysCache, { keys, address, hour, now }: ReadingQuery) {
  const kept = keys.map((k) => pastDays.get(k.dimension, k.key, hour));
  const values: unknown[] = [
    keys.map((k) => k.dimension),
    keys.map((k) => k.key),
    hour,
    `${address} `,
    `${address}!`,
    now,
    kept.map((most) => most === undefined),
  ];
  return { values, kept };
}

function readingOf(
  pastDays: PastDaysCache,
  { keys, hour }: ReadingQuery,
  kept: (number | undefined)[],
  row: ReadingRow,
  own = 0,
): PumpingReading {
  const counts = countsOf(pastDays, keys, hour, kept, row.counts, own);
  return { counts, unverifiedCountries: row.unverified_countries, rules: rulesOf(row) };
}

/** Runs one statement: on the pool, or on a transaction's client. */
type Run = <Row extends QueryResultRow>(name: StatementName, values: unknown[]) => Promise<QueryResult<Row>>;

/** A reading through `name` (readPumping; lockPumping in the check's transaction). */
async function read(
  run: Run,
  pastDays: PastDaysCache,
  name: 'readPumping' | 'lockPumping',
  asked: ReadingQuery,
): Promise<PumpingReading> {
  const { values, kept } = readingParameters(pastDays, asked);
  const { rows } = await run<ReadingRow>(name, values);
  const [row] = rows;
  if (row === undefined) throw new Error('The pumping counters returned no row.');
  return readingOf(pastDays, asked, kept, row);
}

/** A headroom as the store compares it: a whole number from 0 to PostgreSQL's largest integer. */
function asCompared(given: number | undefined): number {
  return given !== undefined && Number.isFinite(given) ? Math.min(Math.max(0, Math.floor(given)), 2_147_483_647) : 0;
}

/**
 * Counts what the check decided on `reading`, unless concurrent checks counted under one of its
 * keys since, more than the answer's headroom on it: true when counted.
 */
async function countIfUnchanged(
  run: Run,
  { keys, hour, address }: ReadingQuery,
  reading: PumpingReading,
  counted: CountedByCheck,
): Promise<boolean> {
  const pressed = counted.count === 'refusal' ? counted.keys : [];
  const headroom = counted.count === 'text' ? counted.headroom : undefined;
  const { rows } = await run<{ counted: boolean }>('countPumping', [
    keys.map((k) => k.dimension),
    keys.map((k) => k.key),
    hour,
    reading.counts.map((c) => c.sentThisHour),
    reading.counts.map((c) => c.refusedThisHour),
    counted.count === 'text',
    pressed.map((k) => k.dimension),
    pressed.map((k) => k.key),
    keys.map((_, i) => asCompared(headroom?.keys[i])),
    `${address} `,
    `${address}!`,
    // Capped as a whole too: the store compares an integer, and the sum of two may pass its largest.
    asCompared(reading.unverifiedCountries + asCompared(headroom?.countries)),
    reading.counts.map((c) => c.sentLastHour),
    reading.counts.map((c) => c.refusedLastHour),
  ]);
  return rows[0]?.counted === true;
}

/**
 * The check of a start below its sure limits (sureCountPumping): its text counted and its counters
 * read in one statement, the count kept only when the reading is within them. The reading is of
 * the counts before the text.
 */
async function countIfSure(
  run: Run,
  pastDays: PastDaysCache,
  asked: ReadingQuery,
  sure: SureLimits,
): Promise<{ reading: PumpingReading; counted: boolean }> {
  const { values, kept } = readingParameters(pastDays, asked);
  const { rows } = await run<ReadingRow & { counted: boolean }>('sureCountPumping', [
    ...values,
    sure.keys.map((k) => k.daily),
    sure.keys.map((k) => k.hourly),
    sure.keys.map((k) => k.refusals),
    sure.countries,
  ]);
  const [row] = rows;
  if (row === undefined) throw new Error('The pumping counters returned no row.');
  return { reading: readingOf(pastDays, asked, kept, row, 1), counted: row.counted };
}

/** A text counted and never sent, given back; a row that only held it goes with it. */
async function giveBack(db: PostgresDb, { keys, hour }: { keys: readonly PumpingKey[]; hour: number }): Promise<void> {
  const values = [hour, keys.map((k) => k.dimension), keys.map((k) => k.key)];
  await query(db, 'releaseSend', values);
  await query(db, 'dropEmptyCounts', values);
}

/**
 * The first try of a check: with sure limits, read and counted in one statement (sureCountPumping),
 * else read. The app decides on the reading; a count that stands is the one it asked for (a text
 * the sure check counted against the app's answer is given back), else it counts the answer if no
 * concurrent check counted under its keys since beyond its headroom. Whether it counted, and the reading.
 */
async function firstTry(
  db: PostgresDb,
  pastDays: PastDaysCache,
  asked: ReadingQuery & { sure?: SureLimits | undefined },
  decide: (reading: PumpingReading) => CountedByCheck,
): Promise<{ counted: boolean; reading: PumpingReading }> {
  const onPool: Run = (name, values) => query(db, name, values);
  const sure = asked.sure === undefined ? undefined : await countIfSure(onPool, pastDays, asked, asked.sure);
  const reading = sure?.reading ?? (await read(onPool, pastDays, 'readPumping', asked));
  const counted = decide(reading);
  if (sure?.counted === true) {
    if (counted.count === 'text') return { counted: true, reading };
    await giveBack(db, asked);
  }
  // Even a refusal that counts nothing (an operator's block) makes the count's round trip: its 429
  // must take as long as one by the counts, or the timing would tell the attacker which rule refused.
  return { counted: await countIfUnchanged(onPool, asked, reading, counted), reading };
}

/**
 * Readings of a check with its counters locked before it gives up (a 500: nothing sent). A counter
 * of the hour before that a check which read as the hour turned makes after the locked reading was
 * not there to lock: one per key (five) may fail a count, and the next reading locks it.
 */
const LOCKED_READS = 7;

/**
 * The check before a text: its first try (firstTry: one round trip for a start below its sure
 * limits, two otherwise, no lock held while the app decides: a check far below every threshold
 * counts on the first try). Else it is read again with the counters locked, in a transaction its
 * count ends: it waits its turn behind the others, so a burst on one country never starves a check.
 */
async function reserve(
  db: PostgresDb,
  pastDays: PastDaysCache,
  asked: ReadingQuery & { sure?: SureLimits | undefined },
  decide: (reading: PumpingReading) => CountedByCheck,
): Promise<PumpingReading> {
  const first = await firstTry(db, pastDays, asked, decide);
  if (first.counted) return first.reading;
  return inTransaction(
    db,
    async (client) => {
      const onClient: Run = (name, values) => queryOn(client, name, values);
      for (let reads = 1; reads <= LOCKED_READS; reads++) {
        const locked = await read(onClient, pastDays, 'lockPumping', asked);
        if (await countIfUnchanged(onClient, asked, locked, decide(locked))) return locked;
      }
      throw new Error('The SMS pumping counters changed under their locks; nothing was counted.');
    },
    'unflushed',
  );
}

function rulesOf(row: ReadingRow): PumpingRule[] {
  return row.rules.map((r) => ({ ...r, until: Number(r.until), setAt: Number(r.setAt) }));
}

/** What operators and the check before a text read, and the check's count on its reading. */
function pumpingReads(
  db: PostgresDb,
): Pick<
  PumpingStore,
  'readPumping' | 'reserveSend' | 'listDecisions' | 'listRules' | 'keysThatMayTrip' | 'countsByDay'
> {
  const pastDays = pastDaysCache();
  return {
    readPumping: (reading) => read((name, values) => query(db, name, values), pastDays, 'readPumping', reading),
    reserveSend: (reading, decide) => reserve(db, pastDays, reading, decide),
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
    releaseSend: (send) => giveBack(db, send),
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
    async recordDecision(d) {
      await query(db, 'insertDecision', [d.decidedAt, d.decision, d.reasons, d.country, d.block, d.address, d.userRef]);
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
