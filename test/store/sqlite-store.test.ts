import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteStore, type SqliteStore } from '../../middleware/store/sqlite.ts';
import type { NewAttempt } from '../../middleware/store/types.ts';

const HOUR = 3_600_000;
let dir: string;
let path: string;
let store: SqliteStore;

function attempt(n: number, overrides: Partial<NewAttempt> = {}): NewAttempt {
  return {
    state: `state-${n}`,
    sessionId: `session-${n}`,
    userRef: `user-${n % 3}`,
    action: 'confirm_phone',
    params: { n, note: 'ünïcode' },
    destination: '+15550100001',
    returnTo: '/done',
    sensitivity: 'normal',
    platform: 'web',
    createdAt: 1_000_000,
    nextCheckAt: 1_000_000,
    ...overrides,
  };
}

function effectsTable(db: BetterSqlite3.Database) {
  db.exec('CREATE TABLE IF NOT EXISTS effects (session_id TEXT NOT NULL, state TEXT NOT NULL)');
}
const countEffects = (db: BetterSqlite3.Database) =>
  (db.prepare('SELECT count(*) AS n FROM effects').get() as { n: number }).n;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'verify-store-'));
  path = join(dir, 'kit.sqlite');
  store = createSqliteStore({ database: path });
  effectsTable(store.db);
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('SQLite store', () => {
  it('keeps an attempt per state with its server-side parameters, and finds it again after reopening the file', async () => {
    await store.insertAttempt(attempt(1));
    await store.close();
    store = createSqliteStore({ database: path });
    const found = await store.findAttemptByState('state-1');
    expect(found).toMatchObject({ sessionId: 'session-1', params: { n: 1, note: 'ünïcode' }, outcome: 'pending', fulfilledAt: null });
    expect(await store.findAttemptByState('state-2')).toBeUndefined();
  });

  it('refuses a second attempt with the same state or the same sessionId, keeping the first', async () => {
    await store.insertAttempt(attempt(1));
    await expect(store.insertAttempt(attempt(2, { state: 'state-1' }))).rejects.toThrow(/UNIQUE/);
    await expect(store.insertAttempt(attempt(2, { sessionId: 'session-1' }))).rejects.toThrow(/UNIQUE/);
    expect((await store.findAttemptByState('state-1'))?.userRef).toBe('user-1');
  });

  it('runs the effect and the mark once: the second caller is told it was already fulfilled', async () => {
    await store.insertAttempt(attempt(1));
    const effect = (tx: BetterSqlite3.Database) => void tx.prepare("INSERT INTO effects VALUES ('session-1', 'x')").run();
    const first = await store.fulfilOnce('session-1', effect, 5);
    const second = await store.fulfilOnce('session-1', effect, 6);
    expect(first.kind).toBe('fulfilled');
    expect(second.kind).toBe('already_fulfilled');
    expect(countEffects(store.db)).toBe(1);
    expect(await store.findAttemptByState('state-1')).toMatchObject({ outcome: 'fulfilled', fulfilledAt: 5 });
  });

  it('rolls back the effect and leaves the attempt pending when the effect throws', async () => {
    await store.insertAttempt(attempt(1));
    await expect(
      store.fulfilOnce('session-1', (tx) => {
        tx.prepare("INSERT INTO effects VALUES ('session-1', 'x')").run();
        throw new Error('payout provider down');
      }, 5),
    ).rejects.toThrow('payout provider down');
    expect(countEffects(store.db)).toBe(0);
    expect((await store.findAttemptByState('state-1'))?.outcome).toBe('pending');
    expect((await store.fulfilOnce('session-1', () => {}, 6)).kind).toBe('fulfilled');
  });

  it('refuses an asynchronous effect, which would escape the transaction, and rolls it back', async () => {
    await store.insertAttempt(attempt(1));
    const asyncEffect = (async () => {}) as unknown as () => void;
    await expect(store.fulfilOnce('session-1', asyncEffect, 5)).rejects.toMatchObject({ code: 'invalid_config' });
    expect((await store.findAttemptByState('state-1'))?.outcome).toBe('pending');
  });

  it('never fulfils a failed, expired or unknown attempt, and never turns a fulfilled one into failed', async () => {
    await store.insertAttempt(attempt(1));
    await store.insertAttempt(attempt(2));
    await store.recordFailure('session-1', 'otp_locked', 5);
    const ran: string[] = [];
    expect((await store.fulfilOnce('session-1', () => void ran.push('1'), 6)).kind).toBe('not_pending');
    expect((await store.fulfilOnce('session-unknown', () => void ran.push('u'), 6)).kind).toBe('not_pending');
    await store.fulfilOnce('session-2', () => {}, 7);
    await store.recordFailure('session-2', 'device_changed', 8);
    expect(ran).toEqual([]);
    expect(await store.findAttemptByState('state-1')).toMatchObject({ outcome: 'failed', failureReason: 'otp_locked' });
    expect(await store.findAttemptByState('state-2')).toMatchObject({ outcome: 'fulfilled', failureReason: null });
  });

  it('fulfils each attempt exactly once when four processes race on the same file', async () => {
    const sessionIds = Array.from({ length: 40 }, (_, i) => `session-${i}`);
    for (let i = 0; i < sessionIds.length; i++) await store.insertAttempt(attempt(i));
    const processes = Array.from({ length: 4 }, () =>
      fork(fileURLToPath(new URL('../fixtures/fulfil-racer.ts', import.meta.url)), [path, ...sessionIds], {
        execArgv: ['--import', 'tsx'],
      }),
    );
    const ready = processes.map((racer) => new Promise((resolve) => racer.once('message', resolve)));
    const results = processes.map(
      (racer) =>
        new Promise<number>((resolve, reject) => {
          racer.on('message', (message) => typeof message === 'number' && resolve(message));
          racer.once('exit', (code) => code !== 0 && reject(new Error(`racer exited with ${code}`)));
        }),
    );
    await Promise.all(ready);
    for (const racer of processes) racer.send('go');
    const ranPerRacer = await Promise.all(results);
    expect(ranPerRacer.reduce((a, b) => a + b, 0)).toBe(sessionIds.length);
    expect(countEffects(store.db)).toBe(sessionIds.length);
    const perSession = store.db.prepare('SELECT count(*) AS n FROM effects GROUP BY session_id HAVING n > 1').all();
    expect(perSession).toEqual([]);
  });

  describe('sweep claims', () => {
    const claim = (owner: string, now: number, limit = 10) =>
      store.claimDueAttempts({ now, owner, limit, leaseMs: 60_000, maxAgeMs: 24 * HOUR });

    it('gives each due attempt to one owner at a time, and back to anyone once the lease expires', async () => {
      for (let i = 0; i < 5; i++) await store.insertAttempt(attempt(i));
      const a = await claim('a', 2_000_000, 3);
      const b = await claim('b', 2_000_000, 10);
      expect(a).toHaveLength(3);
      expect(b).toHaveLength(2);
      expect(new Set([...a, ...b].map((x) => x.state)).size).toBe(5);
      expect(await claim('c', 2_000_000 + 59_000)).toHaveLength(0);
      expect(await claim('c', 2_000_000 + 60_000)).toHaveLength(5);
    });

    it('skips attempts not yet due, settled ones, and ones older than the 24 h window', async () => {
      await store.insertAttempt(attempt(1, { nextCheckAt: 3_000_000 }));
      await store.insertAttempt(attempt(2));
      await store.insertAttempt(attempt(3));
      await store.insertAttempt(attempt(4, { createdAt: 2_000_000 - 24 * HOUR }));
      await store.recordFailure('session-3', 'otp_locked', 5);
      expect((await claim('a', 2_000_000)).map((x) => x.state)).toEqual(['state-2']);
    });

    it('claims only the platform asked for, so a web kit and a mobile kit sharing a store each sweep their own', async () => {
      await store.insertAttempt(attempt(1, { platform: 'web' }));
      await store.insertAttempt(attempt(2, { platform: 'mobile' }));
      const options = { now: 2_000_000, limit: 10, leaseMs: 60_000, maxAgeMs: 24 * HOUR };
      expect((await store.claimDueAttempts({ ...options, owner: 'm', platform: 'mobile' })).map((x) => x.state)).toEqual(['state-2']);
      expect((await store.claimDueAttempts({ ...options, owner: 'w', platform: 'web' })).map((x) => x.state)).toEqual(['state-1']);
    });

    it('reschedules only for the owner of the claim, and releases claims on request', async () => {
      await store.insertAttempt(attempt(1));
      await store.insertAttempt(attempt(2));
      await claim('a', 2_000_000);
      await store.scheduleNextCheck('session-1', 'not-the-owner', 9_000_000);
      expect((await store.findAttemptByState('state-1'))?.nextCheckAt).toBe(1_000_000);
      await store.scheduleNextCheck('session-1', 'a', 9_000_000);
      expect(await store.findAttemptByState('state-1')).toMatchObject({ nextCheckAt: 9_000_000, sweepChecks: 1 });
      expect(await store.releaseClaims('a')).toBe(1);
      expect((await claim('b', 2_000_000)).map((x) => x.state)).toEqual(['state-2']);
    });

    it('expires attempts past 24 h unless a live claim holds them', async () => {
      const now = 1_000_000 + 24 * HOUR;
      await store.insertAttempt(attempt(1));
      await store.insertAttempt(attempt(2));
      await store.insertAttempt(attempt(3, { createdAt: now - HOUR }));
      await store.claimDueAttempts({ now: now - 1, owner: 'a', limit: 1, leaseMs: 60_000, maxAgeMs: 25 * HOUR });
      expect(await store.expireAttempts(now, 24 * HOUR)).toBe(1);
      expect(await store.expireAttempts(now + 60_000, 24 * HOUR)).toBe(1);
      expect((await store.findAttemptByState('state-3'))?.outcome).toBe('pending');
    });
  });

  describe('schema', () => {
    it('shares the file with the integrator: migrating twice keeps the kit rows and leaves user_version alone', async () => {
      store.db.pragma('user_version = 42');
      await store.insertAttempt(attempt(1));
      const again = createSqliteStore({ database: store.db });
      expect(await again.findAttemptByState('state-1')).toBeDefined();
      expect(store.db.pragma('user_version', { simple: true })).toBe(42);
      expect(store.db.pragma('journal_mode', { simple: true })).toBe('wal');
    });

    it('refuses a database written by a newer kit instead of guessing', () => {
      store.db.prepare('UPDATE verify_kit_schema SET version = 99').run();
      expect(() => createSqliteStore({ database: store.db })).toThrow(/newer than this kit/);
    });

    it('rejects an option that is not a path or a database, saying what to pass', () => {
      expect(() => createSqliteStore({ database: {} as unknown as string })).toThrow(/file path or an open better-sqlite3 Database/);
    });
  });
});
