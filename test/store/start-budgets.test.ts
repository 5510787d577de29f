/**
 * consumeStartBudgets, the same suite on SQLite and PostgreSQL: the start limits' three budgets are
 * counted in one transaction, all or nothing, in fixed windows, and safe across processes.
 * The racing processes run on the stores as built (test/fixtures/*-racer.mjs): needs `npm run
 * build` (npm test builds dist/ first).
 */
import { fork } from 'node:child_process';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { StartBudget } from '../../middleware/store/types.ts';
import { racerOnBuiltStores } from '../support/built.ts';
import { describeEachStore, POSTGRES, type StoreUnderTest } from '../support/stores.ts';

const MINUTE = 60_000;
const T0 = 1_700_000_000_000;

describeEachStore('start budgets', (kind) => {
  let h: StoreUnderTest;
  beforeEach(async () => {
    h = await kind.open();
  });
  afterEach(async () => {
    await h.dispose();
  });

  const consume = (budgets: StartBudget[], now: number) => h.store.consumeStartBudgets!({ budgets, now });
  const spent = async () => {
    const rows = await h.query<{ key: string; spent: number }>('SELECT key, spent FROM verify_kit_start_budgets');
    return Object.fromEntries(rows.map((r) => [r.key, r.spent]));
  };
  const user = { key: 'start_user:u1', points: 3, durationMs: 10 * MINUTE };
  const destination = { key: 'start_destination:d1', points: 1, durationMs: 10 * MINUTE };
  const ip = { key: 'start_ip:i1', points: 5, durationMs: 60 * MINUTE };

  it('counts all three budgets together, and a refusal names only the full budget with its time to retry', async () => {
    expect(await consume([user, destination, ip], T0)).toEqual([]);
    expect(await spent()).toEqual({ 'start_user:u1': 1, 'start_destination:d1': 1, 'start_ip:i1': 1 });
    expect(await consume([user, destination, ip], T0 + MINUTE)).toEqual([{ budget: 1, retryAfterMs: 9 * MINUTE }]);
  });

  it('gives back a start the service refused, only in the window it was counted in', async () => {
    await consume([user, destination, ip], T0);
    await h.store.refundStartBudgets!({ budgets: [user, destination, ip], spentAt: T0 });
    expect(await spent()).toEqual({ 'start_user:u1': 0, 'start_destination:d1': 0, 'start_ip:i1': 0 });
    // The destination's one start is free again.
    expect(await consume([user, destination, ip], T0 + MINUTE)).toEqual([]);
    // A refund for a start counted in an older window never touches the window open now.
    await consume([user, destination, ip], T0 + 11 * MINUTE);
    await h.store.refundStartBudgets!({ budgets: [user, destination], spentAt: T0 });
    expect((await spent())['start_destination:d1']).toBe(1);
    expect((await spent())['start_user:u1']).toBe(1);
  });

  it('spends nothing on a refusal: the budgets that had room are left as they were', async () => {
    await consume([user, destination, ip], T0);
    for (let i = 1; i <= 3; i++) {
      expect(await consume([user, destination, ip], T0 + i)).toHaveLength(1);
    }
    expect(await spent()).toEqual({ 'start_user:u1': 1, 'start_destination:d1': 1, 'start_ip:i1': 1 });
    // The user budget still has its two remaining starts, with other destinations.
    const other = { ...destination, key: 'start_destination:d2' };
    const third = { ...destination, key: 'start_destination:d3' };
    expect(await consume([user, other, ip], T0 + 10)).toEqual([]);
    expect(await consume([user, third, ip], T0 + 11)).toEqual([]);
    const fourth = { ...destination, key: 'start_destination:d4' };
    expect(await consume([user, fourth, ip], T0 + 12)).toEqual([{ budget: 0, retryAfterMs: 10 * MINUTE - 12 }]);
    expect((await spent())['start_destination:d4'] ?? 0).toBe(0);
  });

  it('reports every full budget, each with its own window', async () => {
    const tight = { ...user, points: 1 };
    await consume([tight, destination, ip], T0);
    expect(await consume([tight, destination, ip], T0 + MINUTE)).toEqual([
      { budget: 0, retryAfterMs: 9 * MINUTE },
      { budget: 1, retryAfterMs: 9 * MINUTE },
    ]);
  });

  it('opens a new window once the old one has ended (fixed windows, on the given clock)', async () => {
    await consume([destination], T0);
    expect(await consume([destination], T0 + 10 * MINUTE - 1)).toEqual([{ budget: 0, retryAfterMs: 1 }]);
    expect(await consume([destination], T0 + 10 * MINUTE)).toEqual([]);
    // The new window runs from that start.
    expect(await consume([destination], T0 + 15 * MINUTE)).toEqual([{ budget: 0, retryAfterMs: 5 * MINUTE }]);
  });

  it('counts a distinct member once per window, also when another member opened the window earlier', async () => {
    const numbers = (member: string) => ({ key: 'start_user_numbers:u1', points: 2, durationMs: 10 * MINUTE, member });
    expect(await consume([numbers('a')], T0)).toEqual([]);
    expect(await consume([numbers('b')], T0 + MINUTE)).toEqual([]);
    // Both were counted in the window that opened at T0: trying them again spends nothing.
    expect(await consume([numbers('b')], T0 + 2 * MINUTE)).toEqual([]);
    expect(await consume([numbers('a')], T0 + 3 * MINUTE)).toEqual([]);
    expect((await spent())['start_user_numbers:u1']).toBe(2);
    expect(await consume([numbers('c')], T0 + 4 * MINUTE)).toEqual([{ budget: 0, retryAfterMs: 6 * MINUTE }]);
    // A new window counts a member again.
    expect(await consume([numbers('b')], T0 + 10 * MINUTE)).toEqual([]);
    expect((await spent())['start_user_numbers:u1']).toBe(1);
  });

  it('deletes ended counters on a later start, so the table does not grow forever', async () => {
    for (let i = 0; i < 20; i++) await consume([{ ...ip, key: `start_ip:old-${i}` }], T0);
    expect(Object.keys(await spent())).toHaveLength(20);
    await consume([user], T0 + 2 * 60 * MINUTE);
    expect(await spent()).toEqual({ 'start_user:u1': 1 });
  });

  it('still deletes ended counters after a refused start: the refusal rolls back its spends, not the cleanup', async () => {
    const long = { key: 'start_destination:long', points: 1, durationMs: 3 * 60 * MINUTE };
    for (let i = 0; i < 20; i++) await consume([{ ...ip, key: `start_ip:old-${i}` }], T0);
    await consume([long], T0);
    // The first start after the short windows ended is refused (the long budget is full).
    const later = T0 + 2 * 60 * MINUTE;
    expect(await consume([long], later)).toEqual([{ budget: 0, retryAfterMs: 60 * MINUTE }]);
    // A minute later (well within the cleanup interval) the ended counters are gone.
    await consume([user], later + MINUTE);
    expect(await spent()).toEqual({ 'start_destination:long': 1, 'start_user:u1': 1 });
  });

  it('allows exactly N starts against a budget of N when four processes start at once', async () => {
    const points = 10;
    const racers = Array.from({ length: 4 }, () =>
      fork(racerOnBuiltStores('budget-racer.mjs'), [h.spec, '8', String(points)], { execArgv: [] }),
    );
    const ready = racers.map((racer) => new Promise((resolve) => racer.once('message', resolve)));
    const allowed = racers.map(
      (racer) =>
        new Promise<number>((resolve, reject) => {
          racer.on('message', (message) => typeof message === 'number' && resolve(message));
          racer.once('exit', (code) => code !== 0 && reject(new Error(`racer exited with ${code}`)));
        }),
    );
    await Promise.all(ready);
    for (const racer of racers) racer.send('go');
    expect((await Promise.all(allowed)).reduce((a, b) => a + b, 0)).toBe(points);
    expect(await spent()).toEqual({
      'start_user:racer': points,
      'start_destination:racer': points,
      'start_ip:racer': points,
    });
  });
});

describeEachStore(
  'start budgets across instances whose clocks disagree',
  (kind) => {
    let h: StoreUnderTest;
    beforeEach(async () => {
      h = await kind.open();
    });
    afterEach(async () => {
      await h.dispose();
    });
    const HOUR = 60 * MINUTE;
    const destination = { key: 'start_destination:skew', points: 1, durationMs: 10 * MINUTE };

    it("an instance whose clock runs an hour ahead neither resets another instance's live counter nor deletes it", async () => {
      const now = Date.now();
      expect(await h.store.consumeStartBudgets!({ budgets: [destination], now })).toEqual([]);
      const ahead = await h.openAnother();
      // Its first start also runs its cleanup of "ended" counters, on its own clock.
      const refused = await ahead.consumeStartBudgets!({ budgets: [destination], now: now + HOUR });
      expect(refused).toHaveLength(1);
      expect(refused[0]!.budget).toBe(0);
      const rows = await h.query<{ key: string; spent: number }>('SELECT key, spent FROM verify_kit_start_budgets');
      expect(rows).toEqual([{ key: 'start_destination:skew', spent: 1 }]);
      // The instance on time is refused too: the counter it spent is still there.
      expect(await h.store.consumeStartBudgets!({ budgets: [destination], now: now + 1000 })).toHaveLength(1);
    });

    const spentOf = async (key: string) =>
      (await h.query<{ spent: number }>(`SELECT spent FROM verify_kit_start_budgets WHERE key = '${key}'`)).map(
        (row) => row.spent,
      );

    it('gives back a start an instance an hour ahead counted, the service having refused its create', async () => {
      const now = Date.now();
      const ahead = await h.openAnother();
      const budgets = [{ ...destination, key: 'start_destination:ahead' }];
      // Counted at the database's time plus a second, not at its own (an hour on).
      expect(await ahead.consumeStartBudgets!({ budgets, now: now + HOUR })).toEqual([]);
      await ahead.refundStartBudgets!({ budgets, spentAt: now + HOUR });
      expect(await spentOf('start_destination:ahead'), 'the refused start is still counted').toEqual([0]);
      // The number's owner, on an instance on time, can start.
      expect(await h.store.consumeStartBudgets!({ budgets, now: now + 1000 })).toEqual([]);
    });

    it('gives back a start counted in a window an instance half a second ahead opened', async () => {
      const now = Date.now();
      const ahead = await h.openAnother();
      const user = { key: 'start_user:ahead', points: 2, durationMs: 10 * MINUTE };
      // Another user's start on the instance ahead opens the shared window (it ends at now + 500 + 10 min).
      expect(await ahead.consumeStartBudgets!({ budgets: [{ ...user }], now: now + 500 })).toEqual([]);
      // A start on time, 100 ms on; the service refused its create.
      const budgets = [{ ...user }];
      expect(await h.store.consumeStartBudgets!({ budgets, now: now + 100 })).toEqual([]);
      await h.store.refundStartBudgets!({ budgets, spentAt: now + 100 });
      expect(await spentOf('start_user:ahead'), 'the refunded start is still counted').toEqual([1]);
    });
  },
  [POSTGRES],
);
