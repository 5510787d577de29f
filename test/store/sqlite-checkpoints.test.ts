/**
 * The SQLite store's WAL checkpoints: by default a worker thread copies the WAL into the database
 * file, so no landing or start pays for a checkpoint inside its commit; 'on-commit' keeps SQLite's own.
 */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KitErrorCode } from '../../middleware/errors.ts';
import { SAFETY_NET_CHECKPOINT_PAGES } from '../../middleware/store/sqlite/sqlite-checkpoints.ts';
import { createSqliteStore, type SqliteStore, type SqliteStoreOptions } from '../../middleware/store/sqlite/sqlite.ts';
import { waitFor } from '../support/wait-for.ts';

let dir: string;
let path: string;
const opened: SqliteStore[] = [];

const open = (options: Omit<SqliteStoreOptions, 'database'> = {}) => {
  const store = createSqliteStore({ database: path, ...options });
  opened.push(store);
  return store;
};

/** About 300 WAL pages: far below both SQLite's own threshold (1000) and the safety net. */
function writeSomePages(store: SqliteStore): void {
  store.db.exec('CREATE TABLE IF NOT EXISTS filler (text TEXT NOT NULL)');
  const insert = store.db.prepare('INSERT INTO filler (text) VALUES (?)');
  for (let i = 0; i < 300; i++) insert.run('x'.repeat(3000));
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'verify-checkpoints-'));
  path = join(dir, 'kit.sqlite');
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()));
  rmSync(dir, { recursive: true, force: true });
});

describe('SQLite WAL checkpoints', () => {
  it('by default a worker thread copies committed pages into the database file, with no commit checkpointing', async () => {
    const store = open();
    expect(store.db.pragma('wal_autocheckpoint', { simple: true })).toBe(SAFETY_NET_CHECKPOINT_PAGES);
    writeSomePages(store);
    const before = statSync(path).size;
    // 300 pages stay under every commit-time threshold: only the worker can have moved them.
    await waitFor(() => statSync(path).size >= before + 300 * 3000, 10_000, 'the worker to checkpoint the WAL');
  });

  it("'on-commit' leaves SQLite's own checkpoint in the commit that fills the WAL", () => {
    const store = open({ checkpoints: 'on-commit' });
    expect(store.db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
  });

  it('close stops the worker and closes its connection, so the last close removes the WAL file', async () => {
    const store = open();
    writeSomePages(store);
    expect(existsSync(`${path}-wal`)).toBe(true);
    await store.close();
    // SQLite deletes the WAL only when the last connection to the file closes.
    expect(existsSync(`${path}-wal`)).toBe(false);
  });

  it('an in-memory database has no WAL and gets no worker', () => {
    const store = createSqliteStore({ database: ':memory:' });
    opened.push(store);
    expect(store.db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
  });

  it('refuses an unknown checkpoints option with a message that names the choices', () => {
    expect(() => open({ checkpoints: 'sometimes' as never })).toThrow(
      expect.objectContaining({
        code: KitErrorCode.InvalidOptions,
        message: expect.stringMatching(/'background' or 'on-commit'/),
      }),
    );
  });
});
