/**
 * On PostgreSQL a check whose count failed (others counted under its keys since its reading) reads
 * again with this hour's counters locked, and counts on that. The hour before's counters are not
 * locked: a check that read as the hour turned may still count there, between the locked reading
 * and its count, which then fails too. That check was answered with an error (the start a 500);
 * it now reads and decides again, and counts.
 */
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startKeys } from '../../middleware/pumping/pumping-keys.ts';
import { createPostgresStore, type PostgresStore } from '../../middleware/store/postgres/postgres.ts';
import type { PumpingReading } from '../../middleware/store/types.ts';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../support/postgres.ts';

const H = 480_777;
const HOUR = 3_600_000;
const NOW = H * HOUR + 1_000;
/** Three starts to one country, each with a block, an address and a user of its own. */
const startOf = (i: number) => startKeys(`+4474001${i}0000`, `198.51.100.${i}`, `user-${i}`);
const [A, B, C] = [startOf(1), startOf(2), startOf(3)];

let database: TestDatabase;
let pool: pg.Pool;
let store: PostgresStore;
/** Run once, when A's first locked reading has come back, before A counts on it. */
let afterLockedRead: (() => Promise<void>) | undefined;
/** Run once, when A's first count is sent, before it runs. */
let beforeFirstCount: (() => Promise<void>) | undefined;

const named = (config: unknown) =>
  typeof config === 'object' && config !== null ? (config as { name?: string; values?: unknown[] }) : {};
const namesUser = (config: unknown, user: string) => ((named(config).values?.[1] ?? []) as string[]).includes(user);

beforeAll(async () => {
  if (postgresUnavailable !== undefined) return;
  database = await createTestDatabase();
  pool = new pg.Pool({ connectionString: database.url, max: 6 });
  const send = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
  pool.query = (async (config: unknown, ...rest: unknown[]) => {
    if (named(config).name === 'verify_kit_countPumping' && namesUser(config, 'user-1') && beforeFirstCount) {
      const run = beforeFirstCount;
      beforeFirstCount = undefined;
      await run();
    }
    return send(config, ...rest);
  }) as typeof pool.query;
  const connect = pool.connect.bind(pool) as (...args: unknown[]) => Promise<pg.PoolClient>;
  // The store's transactions connect with no argument; pool.query connects with a callback, as is.
  pool.connect = (async (...args: unknown[]) => {
    if (args.length > 0) return connect(...args);
    const client = await connect();
    const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
    client.query = (async (config: unknown, ...rest: unknown[]) => {
      const result = await query(config, ...rest);
      if (named(config).name === 'verify_kit_lockPumping' && namesUser(config, 'user-1') && afterLockedRead) {
        const run = afterLockedRead;
        afterLockedRead = undefined;
        await run();
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
  'a check whose locked reading a check of the hour before counted after is read again and counts, not failed',
  async () => {
    const pumping = store.pumping!;
    // Strict: any count under a key since the reading fails the count.
    const text = (_reading: PumpingReading) => ({ count: 'text' as const });
    const check = (start: typeof A, hour: number, now: number) =>
      pumping.reserveSend({ keys: start.keys, address: start.address, hour, now }, text);
    // C counts under the country between A's reading and A's count: A reads again, locked.
    beforeFirstCount = async () => void (await check(C, H, NOW));
    // B read as the hour turned and counts in the hour before, after A's locked reading.
    afterLockedRead = async () => void (await check(B, H - 1, H * HOUR - 1));
    await expect(check(A, H, NOW)).resolves.toBeDefined();
    expect(afterLockedRead).toBeUndefined();
    const reading = await pumping.readPumping({ keys: A.keys, address: A.address, hour: H, now: NOW });
    // The country: C's text and A's this hour, B's the hour before.
    expect(reading.counts[0]).toMatchObject({ sentThisHour: 2, sentLastHour: 1 });
  },
  30_000,
);
