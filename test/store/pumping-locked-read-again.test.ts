/**
 * On PostgreSQL a check whose count failed (others counted under its keys since its reading, beyond
 * its headroom) reads again with its counters locked, and counts on that. As the hour turns, checks
 * that read in the old hour (waiting for a connection of a busy pool) still count there, under
 * counters of the hour before: each one made after a locked reading failed the count again, and
 * after three such readings the check failed, its start a 500. A refusal's count no longer
 * compares (more counts never make it a text), the locked reading locks the hour before's counters
 * too, and a counter of the hour before made after it is locked at the next reading: a start an
 * operator's block refuses gets its 429, one that passed the challenge is sent.
 */
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEFAULT_THRESHOLDS } from '../../middleware/pumping/pumping-rules.ts';
import { startKeys } from '../../middleware/pumping/pumping-keys.ts';
import { createPostgresStore, type PostgresStore } from '../../middleware/store/postgres/postgres.ts';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../support/postgres.ts';
import { guardCheck } from '../support/gated-pumping-store.ts';

const H = 480_901;
const HOUR = 3_600_000;
const NOW = H * HOUR + 1_000;
const IP = '198.51.100.7';
/** The refused start: to Ghana, whose country an operator blocked. */
const A = startKeys('+233201234567', IP, 'user-a');
/** The same client's texts to Nigeria: one this hour, three read as the hour turned. */
const C = startKeys('+2348031000001', IP, 'user-c');
const B = [1, 2, 3].map((i) => startKeys(`+234803200000${i}`, IP, `user-b${i}`));

let database: TestDatabase;
let pool: pg.Pool;
let store: PostgresStore;
let beforeFirstCount: (() => Promise<void>) | undefined;
const afterLockedRead: (() => Promise<void>)[] = [];

const named = (config: unknown) =>
  typeof config === 'object' && config !== null ? (config as { name?: string; values?: unknown[] }) : {};
const namesUser = (config: unknown, user: string) => ((named(config).values?.[1] ?? []) as string[]).includes(user);

beforeAll(async () => {
  if (postgresUnavailable !== undefined) return;
  database = await createTestDatabase();
  pool = new pg.Pool({ connectionString: database.url, max: 6 });
  const send = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
  pool.query = (async (config: unknown, ...rest: unknown[]) => {
    if (named(config).name === 'verify_kit_countPumping' && namesUser(config, 'user-a') && beforeFirstCount) {
      const run = beforeFirstCount;
      beforeFirstCount = undefined;
      await run();
    }
    return send(config, ...rest);
  }) as typeof pool.query;
  const connect = pool.connect.bind(pool) as (...args: unknown[]) => Promise<pg.PoolClient>;
  pool.connect = (async (...args: unknown[]) => {
    if (args.length > 0) return connect(...args);
    const client = await connect();
    const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
    const release = client.release.bind(client);
    client.release = ((...r: unknown[]) => {
      client.query = query as typeof client.query;
      client.release = release;
      return release(...(r as []));
    }) as typeof client.release;
    client.query = (async (config: unknown, ...rest: unknown[]) => {
      const result = await query(config, ...rest);
      if (named(config).name === 'verify_kit_lockPumping' && namesUser(config, 'user-a')) {
        const run = afterLockedRead.shift();
        if (run) await run();
      }
      return result;
    }) as typeof client.query;
    return client;
  }) as typeof pool.connect;
  store = createPostgresStore({ pool });
  await store.ready;
});
afterAll(async () => {
  await store?.close();
  await pool?.end().catch(() => {});
  await database?.drop();
});

it.skipIf(postgresUnavailable !== undefined)(
  'a start a block refuses, while three checks of the hour before count under its address, is refused, not failed',
  async () => {
    const pumping = store.pumping!;
    await pumping.setRule({ dimension: 'country', key: 'GH', rule: 'block', until: NOW + HOUR, setAt: NOW });
    const check = (start: typeof A, hour: number, now: number) =>
      guardCheck(pumping, start, DEFAULT_THRESHOLDS, { hour, now });
    beforeFirstCount = async () => void (await check(C, H, NOW).done);
    for (const b of B) afterLockedRead.push(async () => void (await check(b, H - 1, H * HOUR - 1).done));
    const a = check(A, H, NOW);
    await expect(a.done).resolves.toBeDefined();
    expect(a.last()).toEqual({ count: 'refusal', keys: [] });
  },
  30_000,
);

it.skipIf(postgresUnavailable !== undefined)(
  'a start that passed the challenge (its text counted with no headroom), while three checks of the hour before count under its address, is sent, not failed',
  async () => {
    const pumping = store.pumping!;
    const H2 = H + 10;
    const ip = '198.51.100.8';
    const a = startKeys('+2348039000001', ip, 'user-a');
    const c = startKeys('+2348038000001', ip, 'user-c2');
    const bs = [1, 2, 3].map((i) => startKeys(`+234803700000${i}`, ip, `user-b2${i}`));
    const check = (start: typeof A, hour: number, now: number) =>
      guardCheck(pumping, start, DEFAULT_THRESHOLDS, { hour, now });
    beforeFirstCount = async () => void (await check(c, H2, H2 * HOUR + 1_000).done);
    for (const b of bs) afterLockedRead.push(async () => void (await check(b, H2 - 1, H2 * HOUR - 1).done));
    // As checkAfterChallenge counts a passed start: TEXT, with no headroom.
    const passed = pumping.reserveSend({ keys: a.keys, address: a.address, hour: H2, now: H2 * HOUR + 1_000 }, () => ({
      count: 'text' as const,
    }));
    await expect(passed).resolves.toBeDefined();
  },
  30_000,
);
