/**
 * A month of SMS pumping history for the pumping-cost phase: about 60,000 texts over the 30 days
 * before now (2,000 a day over the pumping phase's 20 countries, the same shares and code-entry
 * rates), each counted under its country, block, address, user and address with country, most
 * verified. The rows are built here and inserted with SQL in a few statements (what the stores'
 * recordSend and markVerified would have written, one text at a time, over the month): through the
 * stores, 60,000 texts would take minutes on PostgreSQL, one round trip each. Then the store's own
 * purge deletes what a kit running all month would have deleted (counts older than 15 days).
 */
import type { Database } from 'better-sqlite3';
import type pg from 'pg';
import { startKeys } from '../../middleware/pumping/pumping-keys.ts';
import { hourOf } from '../../middleware/pumping/pumping-rules.ts';
import type { PumpingStore } from '../../middleware/store/types.ts';
import { monthCountries, numberIn, random } from './pumping-model.ts';

const DAYS = 30;
const PER_DAY = 2000;
const SEED = 6101;

/** One send, as both stores keep it: its hour, its keys, whether its code was entered. */
interface Send {
  sessionId: string;
  hour: number;
  keys: { dimension: string; key: string }[];
  verified: boolean;
}

/** The counts per key and hour those sends add up to. */
interface CountRow {
  dimension: string;
  key: string;
  hour: number;
  sent: number;
  verified: number;
}

export interface PumpingHistory {
  sends: Send[];
  counts: CountRow[];
  verified: number;
}

/** The month's sends up to `now`, from a fixed seed: the same month on both stores. */
export function monthOfHistory(now: number): PumpingHistory {
  const rand = random(SEED);
  const countries = monthCountries();
  const thisHour = hourOf(now);
  const sends: Send[] = [];
  for (let n = 0; n < DAYS * PER_DAY; n++) {
    let pick = rand();
    const country = countries.find((c) => (pick -= c.share) <= 0) ?? countries[0]!;
    const number = numberIn(rand, country.code, country.prefix);
    const ip = `10.${Math.floor(rand() * 256)}.${Math.floor(rand() * 256)}.${Math.floor(rand() * 256)}`;
    const user = `history-${Math.floor(rand() * 40_000)}`;
    sends.push({
      sessionId: `history-${n}`,
      hour: thisHour - Math.floor(rand() * DAYS * 24),
      keys: startKeys(number, ip, user).keys,
      verified: rand() < country.conversion,
    });
  }
  const counts = new Map<string, CountRow>();
  for (const send of sends) {
    for (const { dimension, key } of send.keys) {
      const id = `${dimension}\n${key}\n${send.hour}`;
      const row = counts.get(id) ?? { dimension, key, hour: send.hour, sent: 0, verified: 0 };
      row.sent += 1;
      if (send.verified) row.verified += 1;
      counts.set(id, row);
    }
  }
  return { sends, counts: [...counts.values()], verified: sends.filter((s) => s.verified).length };
}

/** As pumping-guard.ts keeps them: counts and sends for 15 days. */
const KEPT_HOURS = 15 * 24;

/**
 * Deletes, through the store's own purge, what a kit running all month would have deleted: the
 * counts and sends older than it keeps. The tables then hold what such a kit's hold.
 */
export async function purgeAsTheKitWould(store: PumpingStore, now: number): Promise<void> {
  const query = { beforeHour: hourOf(now) - KEPT_HOURS, decisionsBefore: now - 30 * 24 * 3_600_000, now, limit: 5000 };
  while ((await store.purgePumping(query)) >= query.limit);
}

/** The sends the stores hold that are not the history's (those the app counted). */
export const COUNT_NEW_SENDS =
  "SELECT count(*) AS n FROM verify_kit_pumping_sends WHERE session_id NOT LIKE 'history-%'";

/** Writes the history into a SQLite store's tables (the store created them), in one transaction. */
export function fillSqlite(db: Database, history: PumpingHistory): void {
  const insertSend = db.prepare(
    'INSERT INTO verify_kit_pumping_sends (session_id, hour, keys, verified) VALUES (?, ?, ?, ?)',
  );
  const insertCount = db.prepare(
    'INSERT INTO verify_kit_pumping_counts (dimension, key, hour, sent, verified) VALUES (?, ?, ?, ?, ?)',
  );
  db.transaction(() => {
    for (const s of history.sends) insertSend.run(s.sessionId, s.hour, JSON.stringify(s.keys), s.verified ? 1 : 0);
    for (const c of history.counts) insertCount.run(c.dimension, c.key, c.hour, c.sent, c.verified);
  })();
}

/** Writes the history into a PostgreSQL store's tables (the store created them), 5,000 rows a statement. */
export async function fillPostgres(pool: pg.Pool, history: PumpingHistory): Promise<void> {
  for (let i = 0; i < history.sends.length; i += 5000) {
    const chunk = history.sends.slice(i, i + 5000);
    // Each send's dimensions and keys as PostgreSQL array literals, unnested from one text column each.
    const literal = (values: string[]) => `{${values.map((v) => `"${v.replace(/["\\]/g, '\\$&')}"`).join(',')}}`;
    await pool.query(
      `INSERT INTO verify_kit_pumping_sends (session_id, hour, dimensions, keys, verified)
       SELECT s, h, d::text[], k::text[], v FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::boolean[])
         AS t(s, h, d, k, v)`,
      [
        chunk.map((s) => s.sessionId),
        chunk.map((s) => s.hour),
        chunk.map((s) => literal(s.keys.map((k) => k.dimension))),
        chunk.map((s) => literal(s.keys.map((k) => k.key))),
        chunk.map((s) => s.verified),
      ],
    );
  }
  for (let i = 0; i < history.counts.length; i += 5000) {
    const chunk = history.counts.slice(i, i + 5000);
    await pool.query(
      `INSERT INTO verify_kit_pumping_counts (dimension, key, hour, sent, verified)
       SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::int[], $5::int[])`,
      [
        chunk.map((c) => c.dimension),
        chunk.map((c) => c.key),
        chunk.map((c) => c.hour),
        chunk.map((c) => c.sent),
        chunk.map((c) => c.verified),
      ],
    );
  }
}
