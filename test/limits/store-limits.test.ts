/**
 * Start limits counted in the kit store's own database, the same suite on SQLite and PostgreSQL
 * (start-limits.test.ts covers the budget keys in depth on SQLite). On PostgreSQL, several
 * instances (separate pools and stores on one database) spend one budget.
 */
import type { Request } from 'express';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createStartLimits, type StartLimitsOptions } from '../../middleware/limits/start-limits.ts';
import type { PostgresStore } from '../../middleware/store/postgres/postgres.ts';
import type { StartBudgetCounter } from '../../middleware/store/types.ts';
import type { SqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import { describeEachStore, type StoreUnderTest } from '../support/stores.ts';

const fromIp = (ip: string) => ({ ip }) as Request;
type Consume = (req: Request, who: { userRef: string; destination: string }) => Promise<unknown>;
/** One start from `ip`: 'allowed', or the refusal's code and retry delay. */
const startFrom = (limits: { consume: Consume }, ip: string, userRef: string, destination: string) =>
  outcome(limits.consume(fromIp(ip), { userRef, destination }));
const KEY = 'a-server-side-key-of-at-least-32-characters';

async function outcome(promise: Promise<unknown>) {
  return promise.then(
    () => 'allowed',
    (error: { code: string; retryAfterSeconds: number }) => `${error.code} ${error.retryAfterSeconds}`,
  );
}

describeEachStore('start limits in the store database', (kind) => {
  let h: StoreUnderTest;
  beforeEach(async () => {
    h = await kind.open();
  });
  afterEach(async () => {
    await h.dispose();
  });

  /** Limits counted in the given store's database, as the kit sets them up by default. */
  const limitsOn = (store: unknown, budgets: StartLimitsOptions) =>
    createStartLimits({ store: store as StartBudgetCounter, destinationKey: KEY, ...budgets });
  const limits = (budgets: StartLimitsOptions) => limitsOn(h.store, budgets);
  /** The keys at rest (SQL: the store has no read of its counters, only consumeStartBudgets). */
  const counterKeys = async () => {
    const probe = await h.openAnother();
    const sql = 'SELECT key FROM verify_kit_start_budgets';
    const rows =
      h.kind === 'sqlite'
        ? ((probe as SqliteStore).db.prepare(sql).all() as { key: string }[])
        : (await (probe as PostgresStore).pool.query<{ key: string }>(sql)).rows;
    return rows.map((r) => r.key);
  };

  it('stops a user after their budget and says when to retry', async () => {
    const start = limits({ perUser: { points: 2, durationSeconds: 600 } });
    const results = [];
    for (let i = 0; i < 3; i++) {
      results.push(await startFrom(start, `10.0.0.${i}`, 'u1', `+1555010000${i}`));
    }
    expect(results).toEqual(['allowed', 'allowed', 'rate_limited 600']);
    expect(await startFrom(start, '10.0.0.9', 'u2', '+15550100009')).toBe('allowed');
  });

  it('counts on a clock answering fractions of a millisecond (built on performance.now()), as on Date.now', async () => {
    // The counters' columns hold whole ms: each start failed before the limits cut their clock's time.
    const fractional = () => performance.timeOrigin + performance.now();
    const start = createStartLimits({ store: h.store as StartBudgetCounter, destinationKey: KEY, now: fractional });
    const results = [];
    for (let i = 0; i < 2; i++) results.push(await startFrom(start, '10.0.0.1', 'u1', '+15550100001'));
    expect(results).toEqual(['allowed', 'allowed']);
  });

  it('stops texts to one destination whoever asks, and keeps no phone number in clear', async () => {
    const start = limits({ perDestination: { points: 3, durationSeconds: 3600 } });
    const results = [];
    for (let i = 0; i < 4; i++) {
      results.push(await startFrom(start, `10.0.1.${i}`, `u${i}`, '+15550199999'));
    }
    expect(results).toEqual(['allowed', 'allowed', 'allowed', expect.stringMatching(/^rate_limited /)]);
    const keys = await counterKeys();
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.join(' ')).not.toContain('5550199999');
  });

  it('spends nothing on a refused start', async () => {
    const start = limits({ perUser: { points: 1, durationSeconds: 600 }, perIp: { points: 2, durationSeconds: 600 } });
    const from = (userRef: string) => startFrom(start, '198.51.100.1', userRef, `+1555060${userRef.length}001`);
    expect(await from('u1')).toBe('allowed');
    expect(await from('u1')).toMatch(/^rate_limited /);
    expect(await from('u1')).toMatch(/^rate_limited /);
    expect(await from('u22')).toBe('allowed'); // the IP budget (2) was not spent by the refusals
    expect(await from('u333')).toMatch(/^rate_limited /);
  });

  it('keeps counting across a restart, because the counters live in the database', async () => {
    const before = limits({ perUser: { points: 1, durationSeconds: 600 } });
    expect(await startFrom(before, '10.0.0.1', 'u1', '+15550100001')).toBe('allowed');
    await h.reopen();
    const after = limits({ perUser: { points: 1, durationSeconds: 600 } });
    expect(await startFrom(after, '10.0.0.1', 'u1', '+15550100002')).toMatch(/^rate_limited /);
  });

  it(
    'spends one budget across instances: 30 simultaneous starts over three stores on one database allow exactly ' +
      '10',
    async () => {
      const instances = [h.store, await h.openAnother(), await h.openAnother()].map((store) =>
        // Thirty numbers of one user: the distinct-numbers budget is not what this counts.
        limitsOn(store, {
          perUser: { points: 10, durationSeconds: 600 },
          perUserNumbers: { points: 100, durationSeconds: 600 },
        }),
      );
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          startFrom(instances[i % 3]!, `10.0.2.${i}`, 'u-shared', `+1555030${String(i).padStart(4, '0')}`),
        ),
      );
      expect(results.filter((r) => r === 'allowed')).toHaveLength(10);
      expect(results.filter((r) => r.startsWith('rate_limited '))).toHaveLength(20);
    },
  );

  it('counts the distinct numbers a user tried, across instances: a number tried again spends nothing more', async () => {
    const instances = [h.store, await h.openAnother(), await h.openAnother()].map((store) =>
      limitsOn(store, {
        perUser: { points: 100, durationSeconds: 600 },
        perUserNumbers: { points: 3, durationSeconds: 86_400 },
      }),
    );
    // Thirty simultaneous starts of one user, ten numbers three times each: exactly three numbers get through.
    const numbers = Array.from({ length: 10 }, (_, i) => `+3361234567${i}`);
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => startFrom(instances[i % 3]!, `10.0.3.${i}`, 'u-numbers', numbers[i % 10]!)),
    );
    const allowedNumbers = new Set(numbers.filter((_, n) => results.some((r, i) => i % 10 === n && r === 'allowed')));
    expect(allowedNumbers.size).toBe(3);
    // Every start to an allowed number was allowed: trying it again cost nothing more.
    expect(results.filter((r) => r === 'allowed')).toHaveLength(9);
    expect(results.filter((r) => r.startsWith('rate_limited '))).toHaveLength(21);
    // Another user is not touched; a fourth number of this user still is refused, for the day.
    expect(await startFrom(instances[0]!, '10.0.4.1', 'u-other', numbers[9]!)).toBe('allowed');
    const [first] = allowedNumbers;
    expect(await startFrom(instances[1]!, '10.0.4.2', 'u-numbers', first!)).toBe('allowed');
    const refused = numbers.find((n) => !allowedNumbers.has(n))!;
    expect(await startFrom(instances[2]!, '10.0.4.3', 'u-numbers', refused)).toMatch(/^rate_limited \d+$/);
    // No number in clear in the counters' keys.
    expect((await counterKeys()).join(' ')).not.toContain('612345');
  });
});
