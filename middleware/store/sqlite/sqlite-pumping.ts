/**
 * The SMS pumping counters in SQLite. The check before a text reads, decides and counts in one write
 * of the start's group commit; the send's record follows once its session exists. A verification
 * marks its send and counts under the send's keys in one savepoint of that group commit, so it
 * counts once whatever calls it (landing, sweep, another process).
 */
import type { Database } from 'better-sqlite3';
import { pastDaysCache } from '../past-days-cache.ts';
import { prepareAll, PUMPING_SQL, type PumpingStatements } from './sqlite-sql.ts';
import type { StartWrites } from './sqlite-start-writes.ts';
import type {
  PumpingCount,
  PumpingDimension,
  PumpingKey,
  PumpingReading,
  PumpingRule,
  PumpingStore,
} from '../types.ts';

/** One key's row of the reading. */
interface ReadingRow {
  unverified_countries: number;
  /** The key's counts of the last 24 hours: a JSON array, in the order of CountsRead. */
  counts: string;
  /** Null when not asked for: read earlier this hour. */
  max_past_day: number | null;
  rule: 'allow' | 'block' | null;
  until: number | null;
  set_at: number | null;
}

interface RuleRow {
  dimension: PumpingDimension;
  key: string;
  rule: 'allow' | 'block';
  until: number;
  set_at: number;
}

interface DecisionRow {
  decided_at: number;
  decision: 'warned' | 'refused' | 'challenged';
  reasons: string;
  country: string;
  block: string;
  address: string;
  user_ref: string;
}

/** The counts the reading's JSON array holds, in its order (PUMPING_SQL.readPumping). */
type CountsRead = [
  sentThisHour: number,
  verifiedThisHour: number,
  sentLastHour: number,
  verifiedLastHour: number,
  sentLastDay: number,
  verifiedLastDay: number,
  refusedThisHour: number,
  refusedLastHour: number,
];

function toCount(read: CountsRead, pastDays: number): PumpingCount {
  const [
    sentThisHour,
    verifiedThisHour,
    sentLastHour,
    verifiedLastHour,
    sentLastDay,
    verifiedLastDay,
    refusedThisHour,
    refusedLastHour,
  ] = read;
  const maxVerifiedDay = Math.max(pastDays, verifiedLastDay);
  return {
    sentThisHour,
    verifiedThisHour,
    sentLastHour,
    verifiedLastHour,
    sentLastDay,
    verifiedLastDay,
    maxVerifiedDay,
    refusedThisHour,
    refusedLastHour,
  };
}

function toRule(row: RuleRow): PumpingRule {
  return { dimension: row.dimension, key: row.key, rule: row.rule, until: row.until, setAt: row.set_at };
}

type Sql = PumpingStatements;

/** The start's group commit: a write in a savepoint of its own, or one of a single statement. */
type PumpingWrites = Pick<StartWrites, 'write' | 'writeStatement'>;

type ReadingQuery = Parameters<PumpingStore['readPumping']>[0];

/** What operators and the check before a text read; `readNow` reads synchronously, for a write to read in. */
function pumpingReads(sql: Sql): Pick<
  PumpingStore,
  'readPumping' | 'listDecisions' | 'listRules' | 'keysThatMayTrip' | 'countsByDay'
> & {
  readNow(query: ReadingQuery): PumpingReading;
} {
  const pastDays = pastDaysCache();
  const readNow = ({ keys, address, hour, now }: ReadingQuery): PumpingReading => {
    const kept = keys.map(({ dimension, key }) => pastDays.get(dimension, key, hour));
    // With no key, one that counts nothing: the row still carries the address's countries.
    const asked =
      keys.length === 0
        ? '[["","",0]]'
        : JSON.stringify(keys.map(({ dimension, key }, i) => [dimension, key, kept[i] === undefined ? 1 : 0]));
    const rows = sql.readPumping.all({ keys: asked, address, hour, now }) as ReadingRow[];
    const counts: PumpingCount[] = [];
    const rules: PumpingRule[] = [];
    keys.forEach(({ dimension, key }, i) => {
      const row = rows[i];
      if (row === undefined) throw new Error('The pumping counters returned no row for a key.');
      let past = kept[i];
      if (past === undefined) {
        past = row.max_past_day ?? 0;
        pastDays.set(dimension, key, hour, past);
      }
      counts.push(toCount(JSON.parse(row.counts) as CountsRead, past));
      if (row.rule !== null) {
        rules.push({ dimension, key, rule: row.rule, until: row.until as number, setAt: row.set_at as number });
      }
    });
    return { counts, unverifiedCountries: rows[0]?.unverified_countries ?? 0, rules };
  };
  return {
    readNow,
    ...operatorCounts(sql),
    async readPumping(query) {
      return readNow(query);
    },
    async listDecisions({ since, limit }) {
      return (sql.listDecisions.all({ since, limit }) as DecisionRow[]).map((row) => ({
        decidedAt: row.decided_at,
        decision: row.decision,
        reasons: row.reasons === '' ? [] : row.reasons.split(','),
        country: row.country,
        block: row.block,
        address: row.address,
        userRef: row.user_ref,
      }));
    },
    async listRules(now) {
      return (sql.listRules.all(now) as RuleRow[]).map(toRule);
    },
  };
}

/** The counts per key operators read: which keys may trip now, and texts sent and verified per day. */
function operatorCounts(sql: Sql): Pick<PumpingStore, 'keysThatMayTrip' | 'countsByDay'> {
  return {
    async keysThatMayTrip({ dimension, hour }) {
      return (sql.keysThatMayTrip.all({ dimension, hour }) as { key: string }[]).map((row) => row.key);
    },
    async countsByDay({ dimension, hour, days }) {
      const rows = sql.countsByDay.all({ dimension, hour, days }) as {
        key: string;
        days_ago: number;
        sent: number;
        verified: number;
      }[];
      return rows.map((row) => ({ key: row.key, daysAgo: row.days_ago, sent: row.sent, verified: row.verified }));
    },
  };
}

/** The check's count of a text (reserveSend), given back when unsent, and the send's record. */
function reservations(
  sql: Sql,
  { write, writeStatement }: PumpingWrites,
  readNow: (query: ReadingQuery) => PumpingReading,
): Pick<PumpingStore, 'reserveSend' | 'releaseSend' | 'attachSend'> {
  return {
    // Read, decided and counted in one write of the group commit (BEGIN IMMEDIATE): no other check,
    // in this process or another, reads between the three. One statement writes, or none: no
    // savepoint of its own.
    async reserveSend(query, decide) {
      return writeStatement(() => {
        const reading = readNow(query);
        const counted = decide(reading);
        const hour = query.hour;
        if (counted.count === 'text') sql.countSent.run({ keys: JSON.stringify(query.keys), hour });
        else if (counted.keys.length > 0) sql.countRefused.run({ keys: JSON.stringify(counted.keys), hour });
        return reading;
      });
    },
    // A row that only held this text goes with it: refused starts add no rows.
    async releaseSend({ keys, hour }) {
      await write(() => {
        for (const { dimension, key } of keys) {
          sql.uncountSent.run({ dimension, key, hour });
          sql.dropEmptyCount.run({ dimension, key, hour });
        }
      });
    },
    async attachSend({ sessionId, keys, hour }) {
      await writeStatement(() => sql.insertSend.run({ sessionId, hour, keys: JSON.stringify(keys) }));
    },
  };
}

/** The pumping part of the SQLite store; `starts` is the start's group commit. */
export function sqlitePumping(db: Database, { write, writeStatement }: PumpingWrites): PumpingStore {
  const sql = prepareAll(db, PUMPING_SQL);
  // Run inside the group commit's savepoint: the mark and its counts commit together, once.
  const countVerifiedOnce = (sessionId: string): boolean => {
    const send = sql.markSendVerified.get(sessionId) as { hour: number; keys: string } | undefined;
    if (send === undefined) return false;
    for (const { dimension, key } of JSON.parse(send.keys) as PumpingKey[]) {
      sql.countVerified.run({ dimension, key, hour: send.hour });
    }
    return true;
  };
  const purge = db.transaction(
    (query: { beforeHour: number; decisionsBefore: number; now: number; limit: number }): number =>
      sql.purgeCounts.run(query).changes +
      sql.purgeSends.run(query).changes +
      sql.purgeDecisions.run(query).changes +
      sql.purgeRules.run({ now: query.now }).changes,
  );
  const { readNow, ...reads } = pumpingReads(sql);
  return {
    ...reads,
    ...reservations(sql, { write, writeStatement }, readNow),
    async recordSend({ sessionId, keys, hour }) {
      const listed = JSON.stringify(keys);
      await write(() => {
        if (sql.insertSend.run({ sessionId, hour, keys: listed }).changes === 0) return;
        sql.countSent.run({ keys: listed, hour });
      });
    },
    // With the start's writes in one commit: a sweep's verified reads of one tick share it.
    // A send counted already asks for no write: every reload of a fulfilled attempt asks again.
    async markVerified(sessionId) {
      if (sql.sendToCount.get(sessionId) === undefined) return false;
      return write(() => countVerifiedOnce(sessionId));
    },
    // Read first: a run with nothing to repair takes no write lock.
    async countFulfilledSends({ since, limit }) {
      if (sql.fulfilledUncounted.get({ since, limit }) === undefined) return 0;
      return write(() => {
        const sessions = sql.fulfilledUncounted.all({ since, limit }) as { session_id: string }[];
        return sessions.filter((send) => countVerifiedOnce(send.session_id)).length;
      });
    },
    async recordDecision(decision) {
      await writeStatement(() => sql.insertDecision.run({ ...decision, reasons: decision.reasons.join(',') }));
    },
    async setRule(rule) {
      await write(() => sql.setRule.run(rule));
    },
    async clearRule({ dimension, key }) {
      return (await write(() => sql.clearRule.run({ dimension, key }).changes)) > 0;
    },
    async purgePumping(query) {
      return purge.immediate(query);
    },
  };
}
