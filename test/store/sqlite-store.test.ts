/**
 * What only the SQLite store does; the shared contract is in conformance.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteStore, type SqliteStore } from '../../middleware/store/sqlite.ts';

let dir: string;
let store: SqliteStore;

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
      returnTo: '/done',
      sensitivity: 'normal',
      platform: 'web',
      createdAt: 1,
      nextCheckAt: 1,
    });
    const asyncEffect = async () => {};
    await expect(store.fulfilOnce('session-1', asyncEffect, 5)).rejects.toMatchObject({
      code: 'invalid_config',
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

  it('rejects an option that is not a path or a database, saying what to pass', () => {
    expect(() => createSqliteStore({ database: {} as unknown as string })).toThrow(/file path or an open better-sqlite3 Database/);
  });
});
