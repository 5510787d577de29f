/**
 * What only the SQLite store does; the shared contract is in conformance.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrate, SCHEMA_VERSION } from '../../middleware/store/sqlite/sqlite-schema.ts';
import { PUMPING_SQL, STEP_UP_SQL } from '../../middleware/store/sqlite/sqlite-sql.ts';
import { createSqliteStore, type SqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import { fulfilOnce, newAttempt, storedAttempt } from '../support/attempts.ts';

let dir: string;
let store: SqliteStore;

const attempt = (n: number) => newAttempt(n);

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'verify-store-'));
  store = createSqliteStore({ database: join(dir, 'kit.sqlite') });
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('SQLite store', () => {
  it('refuses an asynchronous effect, which would escape the transaction, and rolls it back', async () => {
    await store.insertAttempt({
      state: 'state-1',
      sessionId: 'session-1',
      userRef: 'user-1',
      action: 'confirm_phone',
      params: null,
      destination: '+15550100001',
      returnTo: '/done',
      sensitivity: 'normal',
      platform: 'web',
      createdAt: 1,
      nextCheckAt: 1,
    });
    const asyncEffect = async () => {};
    await expect(fulfilOnce(store, await storedAttempt(store, 'session-1'), asyncEffect, 5)).rejects.toMatchObject({
      code: 'invalid_options',
      message: expect.stringMatching(/must be synchronous/),
    });
    expect((await store.findAttemptByState('state-1'))?.outcome).toBe('pending');
  });

  it('shares the file with the integrator: migrating twice leaves user_version alone, in WAL mode', () => {
    store.db.pragma('user_version = 42');
    createSqliteStore({ database: store.db });
    expect(store.db.pragma('user_version', { simple: true })).toBe(42);
    expect(store.db.pragma('journal_mode', { simple: true })).toBe('wal');
  });

  it("reads a browser session's grants down its own index: every equality the guard asks is a seek, not a filter", () => {
    const plan = (sql: string, params: Record<string, unknown>) =>
      (store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as { detail: string }[]).map((row) => row.detail);
    const query = { userRef: 'u', scope: 's', browserSession: 'b', startedSince: 0, grantedSince: 0, limit: 50 };
    expect(plan(STEP_UP_SQL.listResourceGrants, { ...query, resourceKey: 'r' })).toContainEqual(
      expect.stringMatching(
        /^SEARCH g USING INDEX verify_kit_grants_session \(user_ref=\? AND scope=\? AND browser_session=\? AND resource_key=\? AND started_at>\?\)/,
      ),
    );
    expect(plan(STEP_UP_SQL.listSessionGrants, query)).toContainEqual(
      expect.stringMatching(
        /^SEARCH g USING INDEX verify_kit_grants_session \(user_ref=\? AND scope=\? AND browser_session=\?\)/,
      ),
    );
  });

  it("gives an SMS pumping text back by the counters' primary key, after an ANALYZE made while the hour was quiet", async () => {
    // A fortnight of hours, a few keys each, analyzed; then the hour a text is given back in. Over
    // a JSON array of keys the plan followed the statistics: here each key's every hour, and on a
    // month of counters the hour's index, every row of the hour read under the write lock.
    const hour = 500_000;
    for (let past = 1; past <= 336; past++) {
      const keys = [
        { dimension: 'country' as const, key: 'GB' },
        { dimension: 'block' as const, key: `+447400${past}` },
        { dimension: 'user' as const, key: `user-${past}` },
      ];
      await store.pumping!.recordSend({ sessionId: `session-${past}`, keys, hour: hour - past });
    }
    store.db.exec('ANALYZE');
    const plan = (sql: string) =>
      (
        store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all({ dimension: 'block', key: '+447400123', hour }) as {
          detail: string;
        }[]
      ).map((row) => row.detail);
    for (const sql of [PUMPING_SQL.uncountSent, PUMPING_SQL.dropEmptyCount]) {
      expect(plan(sql)).toEqual([
        'SEARCH verify_kit_pumping_counts USING PRIMARY KEY (dimension=? AND key=? AND hour=?)',
      ]);
    }
    // And it gives back what was counted, deleting a row that then counts nothing.
    const keys = [
      { dimension: 'country' as const, key: 'GB' },
      { dimension: 'block' as const, key: '+447400123' },
    ];
    await store.pumping!.recordSend({ sessionId: 'session-now', keys, hour });
    await store.pumping!.recordSend({ sessionId: 'session-now-2', keys: keys.slice(0, 1), hour });
    await store.pumping!.releaseSend({ keys, hour });
    expect(
      store.db.prepare('SELECT dimension, key, sent FROM verify_kit_pumping_counts WHERE hour = ?').all(hour),
    ).toEqual([{ dimension: 'country', key: 'GB', sent: 1 }]);
  });

  it('starts on an up-to-date file without writing its schema row', async () => {
    store.db.exec(`CREATE TABLE schema_writes (version INTEGER);
      CREATE TRIGGER schema_written AFTER UPDATE ON verify_kit_schema
        BEGIN INSERT INTO schema_writes VALUES (NEW.version); END;`);
    await createSqliteStore({ database: join(dir, 'kit.sqlite') }).close();
    migrate(store.db);
    expect(store.db.prepare('SELECT version FROM schema_writes').all()).toEqual([]);
    expect(store.db.prepare('SELECT version FROM verify_kit_schema').all()).toEqual([{ version: SCHEMA_VERSION }]);
  });

  it("refuses a busyTimeoutMs SQLite cannot keep ('x', -1, 1.5), which it would take as no wait at all, saying the range", () => {
    for (const busyTimeoutMs of ['x', -1, 1.5, 2 ** 31]) {
      expect(() => createSqliteStore({ database: ':memory:', busyTimeoutMs: busyTimeoutMs as number })).toThrow(
        /^createSqliteStore: `busyTimeoutMs` must be a whole number of milliseconds from 0 to 2147483647/,
      );
    }
    const waiting = createSqliteStore({ database: ':memory:', busyTimeoutMs: 250 });
    expect(waiting.db.pragma('busy_timeout', { simple: true })).toBe(250);
  });

  it('rejects an option that is not a path or a database, saying what to pass', () => {
    const notADatabase = {} as unknown as string;
    expect(() => createSqliteStore({ database: notADatabase })).toThrow(/file path or an open better-sqlite3 Database/);
  });
});

describe('upgrading a version-1 database', () => {
  it('keeps every attempt and its outcome, orders them by when they started, and leaves their destination unknown', async () => {
    const path = join(dir, 'v1.sqlite');
    const db = new BetterSqlite3(path);
    migrate(db, 1);
    const insert = db.prepare(
      `INSERT INTO verify_kit_attempts (state, session_id, user_ref, action, params, return_to, sensitivity, platform,
         created_at, outcome, next_check_at)
       VALUES (?, ?, 'user-a', 'confirm_phone', '{"phone":"+15550100001"}', '/done', 'normal', 'web', ?, ?, 0)`,
    );
    insert.run('z-later', 'session-later', 2000, 'pending');
    insert.run('a-earlier', 'session-earlier', 1000, 'fulfilled');
    db.close();

    const upgraded = createSqliteStore({ database: path });
    try {
      const version = upgraded.db.prepare('SELECT version FROM verify_kit_schema').get() as { version: number };
      expect(version.version).toBe(SCHEMA_VERSION);
      const earlier = await upgraded.findAttemptByState('a-earlier');
      const later = await upgraded.findAttemptByState('z-later');
      expect(earlier).toMatchObject({ outcome: 'fulfilled', destination: null, params: { phone: '+15550100001' } });
      expect(later).toMatchObject({ outcome: 'pending', destination: null });
      expect(earlier!.startSeq).toBeLessThan(later!.startSeq);
      // New attempts go after every migrated one.
      await upgraded.insertAttempt(attempt(9));
      expect((await upgraded.findAttemptByState('state-9'))!.startSeq).toBeGreaterThan(later!.startSeq);
    } finally {
      await upgraded.close();
    }
  });
});

describe('upgrading a version-4 database (start_seq without AUTOINCREMENT)', () => {
  it('keeps every attempt with its start_seq and outcome, and a new attempt still starts after all of them', async () => {
    const path = join(dir, 'v4.sqlite');
    const db = new BetterSqlite3(path);
    migrate(db, 4);
    const insert = db.prepare(
      `INSERT INTO verify_kit_attempts (state, session_id, user_ref, action, params, destination, return_to, sensitivity,
         platform, created_at, outcome, finished_at, next_check_at)
       VALUES (?, ?, 'user-a', 'confirm_phone', 'null', '+15550100001', '/done', 'normal', 'web', ?, ?, ?, 0)`,
    );
    insert.run('state-1', 'session-1', 1000, 'pending', null);
    insert.run('state-2', 'session-2', 2000, 'fulfilled', 2500);
    insert.run('state-3', 'session-3', 3000, 'pending', null);
    const before = db.prepare('SELECT * FROM verify_kit_attempts ORDER BY start_seq').all();
    db.close();

    const upgraded = createSqliteStore({ database: path, checkpoints: 'on-commit' });
    try {
      const version = upgraded.db.prepare('SELECT version FROM verify_kit_schema').get() as { version: number };
      expect(version.version).toBe(SCHEMA_VERSION);
      // Every column kept; the service's userRef was the user's own for every attempt stored before,
      // and no client id was recorded.
      const after = upgraded.db.prepare('SELECT * FROM verify_kit_attempts ORDER BY start_seq').all() as Array<
        Record<string, unknown>
      >;
      expect(after.map(({ service_user_ref: _ref, client_id: _client, ...kept }) => kept)).toEqual(before);
      expect(after.map((row) => row.service_user_ref)).toEqual([null, null, null]);
      expect(after.map((row) => row.client_id)).toEqual([null, null, null]);
      // Attempts stored before client ids were recorded read back with none.
      const claimed = await upgraded.claimDueAttempts({
        now: 5000,
        maxAgeMs: 86_400_000,
        limit: 10,
        leaseMs: 60_000,
        owner: 'after-upgrade',
      });
      expect(claimed.map((a) => [a.state, a.clientId]).sort()).toEqual([
        ['state-1', null],
        ['state-3', null],
      ]);
      const table = upgraded.db.prepare("SELECT sql FROM sqlite_master WHERE name = 'verify_kit_attempts'").get() as {
        sql: string;
      };
      expect(table.sql).not.toMatch(/AUTOINCREMENT/);
      const indexes = upgraded.db
        .prepare(
          "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'verify_kit_attempts' AND sql IS NOT NULL",
        )
        .all()
        .map((row) => (row as { name: string }).name)
        .sort();
      expect(indexes).toEqual(['verify_kit_attempts_due', 'verify_kit_attempts_intent', 'verify_kit_attempts_settled']);
      const newest = (await upgraded.findAttemptByState('state-3'))!.startSeq;
      await upgraded.insertAttempt(attempt(4));
      expect((await upgraded.findAttemptByState('state-4'))!.startSeq).toBeGreaterThan(newest);
    } finally {
      await upgraded.close();
    }
  });
});

describe('upgrading a version-10 database', () => {
  it('keeps every step-up grant and kept form, and records revocations in the new table', async () => {
    const path = join(dir, 'v10.sqlite');
    const db = new BetterSqlite3(path);
    migrate(db, 10);
    db.exec(`INSERT INTO verify_kit_grants VALUES ('session-1', 'user-a', 'security', '', 'browser-1', 1000, 1500);
      INSERT INTO verify_kit_intents VALUES ('intent-1', 'user-a', 'payout', 'browser-1', 'acct-1', 'POST',
        '/accounts/acct-1/payee', '{"iban":"FR76"}', 1000, 901000, NULL);`);
    db.close();

    const upgraded = createSqliteStore({ database: path });
    try {
      const version = upgraded.db.prepare('SELECT version FROM verify_kit_schema').get() as { version: number };
      expect(version.version).toBe(SCHEMA_VERSION);
      const { stepUp } = upgraded;
      const grants = await stepUp.listGrants({ userRef: 'user-a', limit: 10 });
      expect(grants.map((g) => g.sessionId)).toEqual(['session-1']);
      expect(await stepUp.consumeIntent('intent-1', 2000)).toMatchObject({ fields: { iban: 'FR76' } });
      expect(await stepUp.revokeGrants({ userRef: 'user-a', now: 2000 })).toBe(1);
      expect(upgraded.db.prepare('SELECT * FROM verify_kit_grant_revocations').all()).toEqual([
        { user_ref: 'user-a', scope: '', revoked_at: 2000 },
      ]);
    } finally {
      await upgraded.close();
    }
  });
});
