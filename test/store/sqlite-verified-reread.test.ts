/**
 * A verification the SMS pumping counters hold already asks SQLite for no write: every reload of
 * a fulfilled attempt (and every repeated mobile completion) counts its text again, once, and
 * those reads must not queue for the database's one write lock behind the starts and the sweep.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createSqliteStore, type SqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import type { PumpingKey } from '../../middleware/store/types.ts';

let dir: string;
let store: SqliteStore;
const KEYS: PumpingKey[] = [{ dimension: 'country', key: 'FR' }];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'verify-verified-reread-'));
  store = createSqliteStore({ database: join(dir, 'kit.sqlite'), busyTimeoutMs: 50 });
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

it('counts a verification once, and asks again without the write lock once it is counted (or was never sent)', async () => {
  const pumping = store.pumping!;
  await pumping.recordSend({ sessionId: 's1', keys: KEYS, hour: 480_000 });
  await pumping.recordSend({ sessionId: 's2', keys: KEYS, hour: 480_000 });
  expect(await pumping.markVerified('s1')).toBe(true);
  // Another process holds the write lock (a long fulfilment, a purge).
  const holder = new BetterSqlite3(join(dir, 'kit.sqlite'));
  holder.exec('BEGIN IMMEDIATE');
  try {
    expect(await pumping.markVerified('s1')).toBe(false);
    expect(await pumping.markVerified('never-sent')).toBe(false);
    // One still to count does need the lock: it waits, and fails as any write would.
    await expect(pumping.markVerified('s2')).rejects.toMatchObject({ code: 'SQLITE_BUSY' });
  } finally {
    holder.exec('ROLLBACK');
    holder.close();
  }
  expect(await pumping.markVerified('s2')).toBe(true);
});
