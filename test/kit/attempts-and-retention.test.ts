/**
 * What an operator can read and how long data is kept, through the kit: `kit.attempts` finds a
 * user's attempts by outcome and age with the destination masked and no params; the sweep applies
 * retention on its clock; expired limiter rows are cleaned.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import BetterSqlite3 from 'better-sqlite3';
import type { Request } from 'express';
import { createStartLimits } from '../../middleware/index.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import { contextOf } from '../../middleware/create-kit.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import { maskDestination } from '../../middleware/attempts.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { USERS } from '../support/users.ts';
import { newSeen } from '../support/seen.ts';

const DAY = 86_400_000;
let app: TestApp;
const seen = newSeen();
let verified = '';
let failed = '';

beforeAll(async () => {
  app = await startTestApp();
  const alice = await app.agent(seen).signIn('alice');
  const handoff = await alice.start('set_note', { note: 'secret note' });
  verified = (await app.latestAttempt()).sessionId;
  await alice.request(await alice.verifyOnHostedPage({ ...handoff, sessionId: verified }));
  await alice.start('grant_badge');
  const failing = await app.latestAttempt();
  failed = failing.sessionId;
  await app.emulator.control.complete(failed, { outcome: 'failed', reason: 'otp_locked' });
  await alice.landFor(failed, failing.state);
  const bob = await app.agent(seen).signIn('bob');
  await bob.start('grant_badge');
});
afterAll(async () => {
  await app?.close();
});

describe('kit.attempts', () => {
  it('finds a user’s attempts newest first, with outcome, age and a masked destination, and never the params', async () => {
    const found = await app.kit.attempts.find({ userRef: USERS.alice!.userRef });
    expect(found.map((a) => [a.sessionId, a.outcome, a.reason])).toEqual([
      [failed, 'failed', 'otp_locked'],
      [verified, 'fulfilled', null],
    ]);
    expect(found[0]).toMatchObject({
      action: 'grant_badge',
      destination: '••\u00a011',
      redacted: false,
      clientId: app.clientId,
    });
    expect(found[0]!.createdAt).toBeGreaterThan(Date.now() - 60_000);
    expect(JSON.stringify(found)).not.toContain('secret note');
    expect(JSON.stringify(found)).not.toContain(USERS.alice!.destination);
    expect(JSON.stringify(found)).not.toContain((await app.latestAttempt()).state);
  });

  it('filters by outcome and age, and reads one attempt by sessionId', async () => {
    expect((await app.kit.attempts.find({ outcome: 'pending' })).map((a) => a.userRef)).toEqual([USERS.bob!.userRef]);
    expect(await app.kit.attempts.find({ olderThanMs: 60 * 60_000 })).toEqual([]);
    expect(await app.kit.attempts.find({ newerThanMs: 60 * 60_000, limit: 2 })).toHaveLength(2);
    expect(await app.kit.attempts.get(verified)).toMatchObject({ outcome: 'fulfilled', action: 'set_note' });
    expect(await app.kit.attempts.get('no-such-session')).toBeUndefined();
  });

  it('refuses a search it cannot run, saying how to fix it and naming the call', async () => {
    await expect(app.kit.attempts.find({ limit: 0 })).rejects.toThrow(
      /^kit\.attempts\.find: `limit` must be a whole number from 1 to 500/,
    );
    await expect(app.kit.attempts.find({ outcome: 'won' as never })).rejects.toThrow(/`outcome` must be one of/);
    await expect(app.kit.attempts.get('')).rejects.toThrow(
      /^kit\.attempts\.get: `sessionId` must be a non-empty string/,
    );
  });

  it('masks all but the last two characters of a destination', () => {
    expect(maskDestination('+15550100001')).toBe('••\u00a001');
  });
});

describe('retention on the sweep’s clock', () => {
  it('keeps everything for 30 days, then drops params and destination, then deletes after 90 days; pending is untouched', async () => {
    const sweepAt = (days: number) => runSweep({ ...contextOf(app.kit), now: () => Date.now() + days * DAY });
    expect(await sweepAt(29)).toMatchObject({ redacted: 0, deleted: 0 });
    const at31 = await sweepAt(31);
    expect(at31).toMatchObject({ redacted: 2, deleted: 0 });
    expect((await app.attempt(verified))?.params).toBeNull();
    expect(await app.kit.attempts.get(verified)).toMatchObject({ destination: null, redacted: true });
    expect(await sweepAt(91)).toMatchObject({ deleted: 2 });
    expect(await app.kit.attempts.get(verified)).toBeUndefined();
    // Bob's attempt expired (never verified) on the first sweep past 24 h; retention deletes it on its own clock.
    expect((await app.kit.attempts.find({ userRef: USERS.bob!.userRef }))[0]).toMatchObject({ outcome: 'expired' });
  });

  it('can be tuned or switched off, and refuses settings that cannot work', async () => {
    await expect(app.kit.runSweep({ retention: { redactAfterMs: 10 } })).rejects.toThrow(/redactAfterMs >= 60000/);
    await expect(app.kit.runSweep({ retention: { redactAfterMs: 2 * DAY, deleteAfterMs: DAY } })).rejects.toThrow(
      /deleteAfterMs >= redactAfterMs/,
    );
    expect(
      await runSweep({ ...contextOf(app.kit), now: () => Date.now() + 365 * DAY }, { retention: false }),
    ).toMatchObject({
      redacted: 0,
      deleted: 0,
    });
  });
});

describe('limiter counters', () => {
  it('are deleted once their window has ended, so the table does not grow forever', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const db = new BetterSqlite3(':memory:');
    try {
      const limits = createStartLimits({
        store: createSqliteStore({ database: db }),
        destinationKey: 'a-server-side-key-of-at-least-32-characters',
      });
      // SQL: counters have no read in the store's interface (only consumeStartBudgets), and the
      // table's rows are what this is about.
      const keys = () =>
        (db.prepare('SELECT key FROM verify_kit_start_budgets ORDER BY key').all() as { key: string }[]).map(
          (r) => r.key,
        );
      await limits.consume({ ip: '203.0.113.1' } as Request, { userRef: 'u1', destination: '+15550100001' });
      const first = keys();
      // user, destination, IP, the user's distinct numbers and the number counted in it
      expect(first).toHaveLength(5);
      // Every window (at most a day) has ended: the next start deletes the old counters.
      vi.setSystemTime(Date.now() + 25 * 60 * 60_000);
      await limits.consume({ ip: '203.0.113.2' } as Request, { userRef: 'u2', destination: '+15550100002' });
      expect(keys()).toHaveLength(5);
      expect(keys().filter((key) => first.includes(key))).toEqual([]);
    } finally {
      vi.useRealTimers();
      db.close();
    }
  });
});
