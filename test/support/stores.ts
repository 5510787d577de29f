/**
 * The stores under test, behind one shape, so that a suite written once runs unchanged against
 * SQLite and PostgreSQL (`describe.each(STORE_KINDS)`). Each open() starts from an empty database:
 * a new SQLite file in a temporary directory, or the suite's scratch PostgreSQL database
 * (test/support/postgres.ts) with its schema emptied, dropped after the suite.
 *
 * The test action writes one row per fulfilment into `effects` (no unique constraint, so a second
 * fulfilment would show as a second row) inside the store's transaction, with the handle the
 * store passes: synchronous better-sqlite3 calls, or awaited queries on the pg client.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import type { PoolClient } from 'pg';
import pg from 'pg';
import { afterAll, describe, it } from 'vitest';
import { createPostgresStore, type PostgresStore } from '../../middleware/store/postgres/postgres.ts';
import { createSqliteStore, type SqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import {
  migrate as migratePostgres,
  SCHEMA_VERSION as POSTGRES_SCHEMA,
} from '../../middleware/store/postgres/postgres-schema.ts';
import {
  migrate as migrateSqlite,
  SCHEMA_VERSION as SQLITE_SCHEMA,
} from '../../middleware/store/sqlite/sqlite-schema.ts';
import type { Attempt, FulfilEffect, VerifyStore } from '../../middleware/store/types.ts';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from './postgres.ts';

export type StoreKindName = 'sqlite' | 'postgres';

export interface StoreUnderTest {
  kind: StoreKindName;
  store: VerifyStore<unknown>;
  /**
   * How a child process opens the same database: `sqlite:<file>` or `postgres:<url>`
   * (openStoreFromSpec).
   */
  spec: string;
  /** An effect that writes one `effects` row (tagged `by`) in the store's transaction, then runs `after`. */
  effect(by?: string, after?: (attempt: Attempt) => void): FulfilEffect<unknown>;
  /** Effect rows, all, and per session id when more than one (must stay empty). */
  countEffects(): Promise<number>;
  duplicateEffects(): Promise<{ session_id: string; n: number }[]>;
  effectsBy(): Promise<Record<string, number>>;
  /** The lease columns, which Attempt does not carry. */
  lease(sessionId: string): Promise<{ owner: string | null; until: number | null }>;
  /** Distinct owners holding leases right now. */
  leaseOwners(): Promise<number>;
  /** Runs one statement without parameters (schema surgery in tests). */
  exec(sql: string): Promise<void>;
  /** Rows of one query without parameters, SQL both stores accept (numbers come back as numbers). */
  query<T>(sql: string): Promise<T[]>;
  /** Closes the store and opens it again on the same database (a restart). */
  reopen(): Promise<void>;
  /** Opens another store on the same database (another instance); rejects when it cannot migrate. */
  openAnother(): Promise<VerifyStore<unknown>>;
  /** This kit's schema version for this store. */
  schemaVersion: number;
  /**
   * Starts an instance of an older kit, whose schema is `version` (this kit's first `version`
   * migrations), on the same database as its store would at startup; rejects as that store would.
   */
  startOlderKit(version: number): Promise<void>;
  /** Closes every store opened here and removes the database. */
  dispose(): Promise<void>;
}

export interface StoreKind {
  name: StoreKindName;
  /** Why this kind cannot run here (skipped with that reason), or undefined. */
  unavailable: string | undefined;
  open(): Promise<StoreUnderTest>;
}

export const EFFECTS_SQL =
  'CREATE TABLE IF NOT EXISTS effects (session_id TEXT NOT NULL, state TEXT NOT NULL, by TEXT NOT NULL)';
const DUPLICATES_SQL = 'SELECT session_id, count(*) AS n FROM effects GROUP BY session_id HAVING count(*) > 1';
const BY_SQL = 'SELECT by, count(*) AS n FROM effects GROUP BY by';
const LEASE_SQL = 'SELECT lease_owner, lease_until FROM verify_kit_attempts WHERE session_id = ';
const OWNERS_SQL = 'SELECT count(DISTINCT lease_owner) AS n FROM verify_kit_attempts WHERE lease_owner IS NOT NULL';

/** A SQLite attempt's lease (columns Attempt does not carry): the one place suites read them on SQLite. */
export function sqliteLease(db: Database, sessionId: string): { owner: string | null; until: number | null } {
  type Lease = { lease_owner: string | null; lease_until: number | null };
  const row = db.prepare(`${LEASE_SQL}?`).get(sessionId) as Lease;
  return { owner: row.lease_owner, until: row.lease_until };
}

/** Distinct owners holding leases right now, on SQLite. */
export function sqliteLeaseOwners(db: Database): number {
  return (db.prepare(OWNERS_SQL).get() as { n: number }).n;
}

async function openSqlite(): Promise<StoreUnderTest> {
  const dir = mkdtempSync(join(tmpdir(), 'verify-store-'));
  const path = join(dir, 'kit.sqlite');
  const opened: SqliteStore[] = [];
  const open = () => {
    const store = createSqliteStore({ database: path });
    store.db.exec(EFFECTS_SQL);
    opened.push(store);
    return store;
  };
  let store = open();
  const db = (): Database => store.db;
  const h: StoreUnderTest = {
    kind: 'sqlite',
    get store() {
      return store;
    },
    spec: `sqlite:${path}`,
    effect:
      (by = 'test', after) =>
      (tx, attempt) => {
        const insert = (tx as Database).prepare('INSERT INTO effects (session_id, state, by) VALUES (?, ?, ?)');
        insert.run(attempt.sessionId, attempt.state, by);
        after?.(attempt);
      },
    countEffects: async () => (db().prepare('SELECT count(*) AS n FROM effects').get() as { n: number }).n,
    duplicateEffects: async () => db().prepare(DUPLICATES_SQL).all() as { session_id: string; n: number }[],
    effectsBy: async () => {
      const rows = db().prepare(BY_SQL).all() as { by: string; n: number }[];
      return Object.fromEntries(rows.map((r) => [r.by, r.n]));
    },
    lease: async (sessionId) => sqliteLease(db(), sessionId),
    leaseOwners: async () => sqliteLeaseOwners(db()),
    exec: async (sql) => void db().exec(sql),
    query: async <T>(sql: string) => db().prepare(sql).all() as T[],
    async reopen() {
      await store.close();
      store = open();
    },
    openAnother: async () => open(),
    schemaVersion: SQLITE_SCHEMA,
    async startOlderKit(version) {
      const older = new BetterSqlite3(path);
      try {
        migrateSqlite(older, version, version);
      } finally {
        older.close();
      }
    },
    async dispose() {
      for (const s of opened) await s.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return h;
}

/** One scratch database per suite (creating one costs about a second): each open() empties it. */
let suiteDatabase: Promise<TestDatabase> | undefined;

async function emptySuiteDatabase(): Promise<TestDatabase> {
  suiteDatabase ??= createTestDatabase();
  const database = await suiteDatabase;
  await database.pool.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public');
  return database;
}

async function dropSuiteDatabase(): Promise<void> {
  const database = suiteDatabase;
  suiteDatabase = undefined;
  await (await database)?.drop();
}

async function openPostgres(): Promise<StoreUnderTest> {
  const database: TestDatabase = await emptySuiteDatabase();
  const pools: pg.Pool[] = [];
  const opened: PostgresStore[] = [];
  const open = async () => {
    const pool = new pg.Pool({ connectionString: database.url, max: 10 });
    pools.push(pool);
    const store = createPostgresStore({ pool });
    opened.push(store);
    await store.ready;
    await pool.query(EFFECTS_SQL);
    return store;
  };
  let store = await open();
  const one = async <T>(sql: string, values: unknown[] = []) => (await database.pool.query(sql, values)).rows as T[];
  const h: StoreUnderTest = {
    kind: 'postgres',
    get store() {
      return store;
    },
    spec: `postgres:${database.url}`,
    effect:
      (by = 'test', after) =>
      async (tx, attempt) => {
        const insert = 'INSERT INTO effects (session_id, state, by) VALUES ($1, $2, $3)';
        await (tx as PoolClient).query(insert, [attempt.sessionId, attempt.state, by]);
        after?.(attempt);
      },
    countEffects: async () => Number((await one<{ n: string }>('SELECT count(*) AS n FROM effects'))[0]!.n),
    duplicateEffects: async () =>
      (await one<{ session_id: string; n: string }>(DUPLICATES_SQL)).map((r) => ({ ...r, n: Number(r.n) })),
    effectsBy: async () => {
      const rows = await one<{ by: string; n: string }>(BY_SQL);
      return Object.fromEntries(rows.map((r) => [r.by, Number(r.n)]));
    },
    lease: async (sessionId) => {
      type Lease = { lease_owner: string | null; lease_until: string | null };
      const [row] = await one<Lease>(`${LEASE_SQL}$1`, [sessionId]);
      return { owner: row!.lease_owner, until: row!.lease_until === null ? null : Number(row!.lease_until) };
    },
    leaseOwners: async () => Number((await one<{ n: string }>(OWNERS_SQL))[0]!.n),
    exec: async (sql) => void (await database.pool.query(sql)),
    query: async <T>(sql: string) => {
      const result = await database.pool.query(sql);
      // BIGINT (and count(*)) arrive as strings: numbers, as SQLite gives them.
      const bigints = result.fields.filter((f) => f.dataTypeID === 20).map((f) => f.name);
      return result.rows.map((row: Record<string, unknown>) => {
        for (const name of bigints) if (row[name] !== null) row[name] = Number(row[name]);
        return row;
      }) as T[];
    },
    async reopen() {
      await store.close();
      store = await open();
    },
    openAnother: open,
    schemaVersion: POSTGRES_SCHEMA,
    startOlderKit: (version) => migratePostgres(database.pool, version, version),
    async dispose() {
      for (const s of opened) await s.close();
      for (const p of pools) await p.end().catch(() => {});
    },
  };
  return h;
}

export const SQLITE: StoreKind = { name: 'sqlite', unavailable: undefined, open: openSqlite };
export const POSTGRES: StoreKind = { name: 'postgres', unavailable: postgresUnavailable, open: openPostgres };
/** Every store the kit ships; suites run once per entry. */
export const STORE_KINDS: readonly StoreKind[] = [SQLITE, POSTGRES];

/** Opens a store from a `sqlite:<file>` / `postgres:<url>` spec (child processes); close() also ends its pool. */
export async function openStoreFromSpec(spec: string): Promise<{ store: VerifyStore<unknown>; kind: StoreKindName }> {
  if (spec.startsWith('sqlite:')) {
    const store = createSqliteStore({ database: spec.slice('sqlite:'.length) });
    store.db.exec(EFFECTS_SQL);
    return { store, kind: 'sqlite' };
  }
  if (spec.startsWith('postgres:')) {
    const pool = new pg.Pool({ connectionString: spec.slice('postgres:'.length), max: 4 });
    const store = createPostgresStore({ pool });
    await store.ready;
    await pool.query(EFFECTS_SQL);
    return {
      kind: 'postgres',
      store: {
        ...store,
        async close() {
          await store.close();
          await pool.end();
        },
      },
    };
  }
  throw new Error(`unknown store spec ${spec}`);
}

/**
 * `describe.each` over the stores: `body` is the same suite for every kind. A kind that cannot run
 * here shows up as one skipped test carrying the reason (and in CI postgres.ts throws instead).
 */
export function describeEachStore(
  title: string,
  body: (kind: StoreKind) => void,
  kinds: readonly StoreKind[] = STORE_KINDS,
): void {
  describe.each(kinds)(`${title} on $name`, (kind) => {
    if (kind.unavailable !== undefined) {
      it.skip(`not run: ${kind.unavailable}`, () => {});
      return;
    }
    if (kind.name === 'postgres') afterAll(dropSuiteDatabase);
    body(kind);
  });
}
