/**
 * On PostgreSQL a transaction whose action missed its deadline has its connection destroyed (the
 * action may still be using it), while one whose action failed is rolled back and its connection
 * pooled again. The integrator may throw a KitError of any code, `hook_failed` included: that is
 * an action that failed, never a missed deadline, so its connection is rolled back and kept.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withDeadline } from '../../middleware/deadline.ts';
import { KitError, KitErrorCode } from '../../middleware/errors.ts';
import { transactionOn } from '../../middleware/store/postgres/postgres-query.ts';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../support/postgres.ts';

describe.skipIf(postgresUnavailable !== undefined)('a transaction whose action fails with hook_failed', () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  let connects = 0;
  beforeAll(async () => {
    database = await createTestDatabase();
    pool = new pg.Pool({ connectionString: database.url, max: 1 });
    pool.on('connect', () => {
      connects += 1;
    });
    await pool.query('SELECT 1');
  });
  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  it("the integrator's own hook_failed: rolled back, the connection kept", async () => {
    const before = connects;
    const thrown = new KitError(KitErrorCode.HookFailed, 'the ledger refused it');
    await expect(
      transactionOn(pool, async (client) => {
        await client.query('SELECT 1');
        throw thrown;
      }),
    ).rejects.toBe(thrown);
    await pool.query('SELECT 1');
    expect(connects - before).toBe(0);
  });

  it('a missed deadline: the connection destroyed', async () => {
    const before = connects;
    await expect(
      transactionOn(pool, () => withDeadline('fulfil', 10, () => new Promise<never>(() => {}))),
    ).rejects.toMatchObject({ code: KitErrorCode.HookFailed });
    await pool.query('SELECT 1');
    expect(connects - before).toBe(1);
  });
});
