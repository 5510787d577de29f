/**
 * The SQLite store's group commit of start writes (new attempts, refunds): what concurrent starts
 * write in one turn of the event loop commits together, yet each write stands or falls alone, and
 * no caller hears "stored" before the commit. A start's budgets, which its text waits on, are
 * spent at once in a transaction of their own.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteStore, type SqliteStore, type SqliteStoreOptions } from '../../middleware/store/sqlite/sqlite.ts';
import { startWrites } from '../../middleware/store/sqlite/sqlite-start-writes.ts';
import { newAttempt } from '../support/attempts.ts';

let dir: string;
let path: string;
const opened: SqliteStore[] = [];

function open(options: Omit<SqliteStoreOptions, 'database'> = {}): SqliteStore {
  // 'on-commit': no worker copies the WAL away while a test reads its size.
  const store = createSqliteStore({ database: path, checkpoints: 'on-commit', ...options });
  opened.push(store);
  return store;
}

const walBytes = () => statSync(`${path}-wal`).size;
const budget = (key: string, points: number) => ({ key, points, durationMs: 60_000 });

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'verify-start-writes-'));
  path = join(dir, 'kit.sqlite');
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()));
  rmSync(dir, { recursive: true, force: true });
});

describe('SQLite start writes', () => {
  it('commits the writes of concurrent starts together: 40 at once append a fraction of the WAL 40 in turn do', async () => {
    const store = open();
    const before = walBytes();
    await Promise.all(Array.from({ length: 40 }, (_, i) => store.insertAttempt(newAttempt(i))));
    const together = walBytes() - before;
    for (let i = 40; i < 80; i++) await store.insertAttempt(newAttempt(i));
    const inTurn = walBytes() - before - together;
    // One commit rewrites each touched page once; forty commits rewrite the same pages forty times.
    expect(together * 5).toBeLessThan(inTurn);
    expect((await store.listAttempts({ limit: 100 })).length).toBe(80);
  });

  it('rolls back only the write that throws: its neighbours in the group are stored', async () => {
    const store = open();
    await store.insertAttempt(newAttempt(1));
    await store.consumeStartBudgets({ budgets: [budget('ip:1', 1)], now: 1_000 });
    const results = await Promise.allSettled([
      store.insertAttempt(newAttempt(2)),
      // The same state as attempt 1: the UNIQUE constraint refuses it.
      store.insertAttempt(newAttempt(3, { state: 'state-1' })),
      store.consumeStartBudgets({ budgets: [budget('user:a', 5), budget('ip:1', 1)], now: 1_000 }),
      store.insertAttempt(newAttempt(4)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ code: 'SQLITE_CONSTRAINT_UNIQUE' });
    // The refused start spent nothing, not even on the budget that had room.
    expect((results[2] as PromiseFulfilledResult<unknown>).value).toEqual([{ budget: 1, retryAfterMs: 60_000 }]);
    expect(await store.consumeStartBudgets({ budgets: [budget('user:a', 1)], now: 1_000 })).toEqual([]);
    expect(await store.findAttemptBySessionId('session-3')).toBeUndefined();
    expect((await store.findAttemptBySessionId('session-2'))?.state).toBe('state-2');
    expect((await store.findAttemptBySessionId('session-4'))?.state).toBe('state-4');
  });

  it('rolls back a write alone in its turn whole: a start refused by its second budget spends the first one neither', async () => {
    const store = open();
    await store.consumeStartBudgets({ budgets: [budget('ip:2', 1)], now: 1_000 });
    // Alone in its group: the first budget is spent, then the second refuses.
    expect(await store.consumeStartBudgets({ budgets: [budget('user:b', 1), budget('ip:2', 1)], now: 1_000 })).toEqual([
      { budget: 1, retryAfterMs: 60_000 },
    ]);
    expect(await store.consumeStartBudgets({ budgets: [budget('user:b', 1)], now: 1_000 })).toEqual([]);
    const db = new BetterSqlite3(path);
    try {
      expect(db.prepare('SELECT key, spent FROM verify_kit_start_budgets ORDER BY key').all()).toEqual([
        { key: 'ip:2', spent: 1 },
        { key: 'user:b', spent: 1 },
      ]);
    } finally {
      db.close();
    }
  });

  it('settles a caller only after the commit: another connection sees the attempt by then, and not before', async () => {
    const store = open();
    const other = new BetterSqlite3(path, { readonly: true });
    const seen = () => other.prepare("SELECT COUNT(*) AS n FROM verify_kit_attempts WHERE state = 'state-1'").get();
    try {
      const stored = store.insertAttempt(newAttempt(1));
      expect(seen()).toEqual({ n: 0 });
      await stored;
      expect(seen()).toEqual({ n: 1 });
    } finally {
      other.close();
    }
  });

  it("spends a start's budgets at once: another connection sees them spent before the call returns, not a turn later", async () => {
    const store = open();
    const other = new BetterSqlite3(path, { readonly: true });
    const spent = () => other.prepare("SELECT spent FROM verify_kit_start_budgets WHERE key = 'user:now'").get();
    try {
      const consumed = store.consumeStartBudgets({ budgets: [budget('user:now', 5)], now: 1_000 });
      expect(spent()).toEqual({ spent: 1 });
      expect(await consumed).toEqual([]);
    } finally {
      other.close();
    }
  });

  it("commits the writes queued in this turn with a start's budgets, in their transaction, not a turn later", async () => {
    const store = open();
    const other = new BetterSqlite3(path, { readonly: true });
    const seen = () => other.prepare("SELECT COUNT(*) AS n FROM verify_kit_attempts WHERE state = 'state-1'").get();
    try {
      const stored = store.insertAttempt(newAttempt(1));
      const consumed = store.consumeStartBudgets({ budgets: [budget('user:with', 5)], now: 1_000 });
      // Already committed, before the turn the queued write was waiting for.
      expect(seen()).toEqual({ n: 1 });
      await Promise.all([stored, consumed]);
    } finally {
      other.close();
    }
  });

  it("keeps the queued writes when a start's budgets refuse it, and the refusal spends nothing", async () => {
    const store = open();
    await store.consumeStartBudgets({ budgets: [budget('ip:3', 1)], now: 1_000 });
    const stored = store.insertAttempt(newAttempt(1));
    const refused = store.consumeStartBudgets({ budgets: [budget('user:c', 1), budget('ip:3', 1)], now: 1_000 });
    expect(await refused).toEqual([{ budget: 1, retryAfterMs: 60_000 }]);
    await stored;
    expect((await store.findAttemptBySessionId('session-1'))?.state).toBe('state-1');
    expect(await store.consumeStartBudgets({ budgets: [budget('user:c', 1)], now: 1_000 })).toEqual([]);
  });

  it("spends a start's budgets inside a transaction the integrator opened, and gives them back with its rollback", async () => {
    const store = open();
    store.db.exec('BEGIN');
    const consumed = store.consumeStartBudgets({ budgets: [budget('user:tx', 1)], now: 1_000 });
    store.db.exec('ROLLBACK');
    expect(await consumed).toEqual([]);
    // Rolled back with the integrator's transaction: the one start the budget allows is still there.
    expect(await store.consumeStartBudgets({ budgets: [budget('user:tx', 1)], now: 1_000 })).toEqual([]);
    expect(await store.consumeStartBudgets({ budgets: [budget('user:tx', 1)], now: 1_000 })).toEqual([
      { budget: 0, retryAfterMs: 60_000 },
    ]);
  });

  it('rejects every write of a group whose transaction cannot start, and stores none of them', async () => {
    const store = open({ busyTimeoutMs: 50 });
    const holder = new BetterSqlite3(path);
    holder.exec('BEGIN IMMEDIATE');
    const results = await Promise.allSettled([
      store.insertAttempt(newAttempt(1)),
      store.consumeStartBudgets({ budgets: [budget('user:a', 5)], now: 1_000 }),
    ]);
    holder.exec('ROLLBACK');
    holder.close();
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect((results[0] as PromiseRejectedResult).reason).toMatchObject({ code: 'SQLITE_BUSY' });
    expect(await store.findAttemptBySessionId('session-1')).toBeUndefined();
    // The budget was not spent either: the next start is the first one it counts.
    expect(await store.consumeStartBudgets({ budgets: [budget('user:a', 5)], now: 1_000 })).toEqual([]);
    expect(store.db.prepare('SELECT spent FROM verify_kit_start_budgets').get()).toEqual({ spent: 1 });
  });

  it('fails the whole group when SQLite rolls its transaction back: no later write commits on its own', async () => {
    const db = new BetterSqlite3(path);
    db.exec('CREATE TABLE t (v INTEGER)');
    const writes = startWrites(db);
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    try {
      const results = await Promise.allSettled([
        writes.writeStatement(() => insert.run(1)),
        // As SQLite does on some errors (an I/O error, no memory): the transaction is gone.
        writes.write(() => {
          db.exec('ROLLBACK');
          throw new Error('disk I/O error');
        }),
        writes.writeStatement(() => insert.run(3)),
        writes.write(() => insert.run(4)),
      ]);
      expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected', 'rejected']);
      expect(db.prepare('SELECT v FROM t').all()).toEqual([]);
    } finally {
      db.close();
    }
  });

  it('joins a transaction the integrator opened on the shared connection, at once, and rolls back with it', async () => {
    const store = open();
    store.db.exec('BEGIN');
    const stored = store.insertAttempt(newAttempt(1));
    store.db.exec('ROLLBACK');
    await stored;
    expect(await store.findAttemptBySessionId('session-1')).toBeUndefined();
    store.db.exec('BEGIN');
    void store.insertAttempt(newAttempt(2));
    store.db.exec('COMMIT');
    expect((await store.findAttemptBySessionId('session-2'))?.state).toBe('state-2');
  });

  it('commits what is queued when the store closes, before the database is closed', async () => {
    const store = open();
    const stored = store.insertAttempt(newAttempt(1));
    await store.close();
    await stored;
    const reopened = open();
    expect((await reopened.findAttemptBySessionId('session-1'))?.state).toBe('state-1');
  });
});
