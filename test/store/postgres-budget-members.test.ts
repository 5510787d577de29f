/**
 * A number a user tries again spends nothing more of their distinct-numbers budget, also when the
 * two starts run at once on two instances of the app: the second waits on the counter the first
 * holds, and once the first commits, it must see the number as counted. (Read from a snapshot
 * taken before it waited, it counted the number a second time: with room for one number, the
 * user's own retry was refused.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresStore, type PostgresStore } from '../../middleware/store/postgres/postgres.ts';
import { SQL } from '../../middleware/store/postgres/postgres-sql.ts';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../support/postgres.ts';
import { waitFor } from '../support/wait-for.ts';

const suite = postgresUnavailable === undefined ? describe : describe.skip;

suite('distinct numbers on PostgreSQL, two starts at once', () => {
  let database: TestDatabase;
  let store: PostgresStore;
  beforeAll(async () => {
    database = await createTestDatabase();
    store = createPostgresStore({ pool: database.pool });
    await store.ready;
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  it('the retry that waited on the first start is not counted again: it is allowed, and the budget holds one number', async () => {
    const now = Date.now();
    const numbers = { key: 'start_user_numbers:u-race', points: 1, durationMs: 86_400_000, member: 'number-a' };
    // The first start, on another instance's connection: it holds the counter until it commits.
    const first = await database.pool.connect();
    try {
      await first.query('BEGIN');
      const { rows } = await first.query(SQL.consumeStartBudgets, [
        [numbers.key],
        [1],
        [numbers.durationMs],
        [numbers.member],
        now,
      ]);
      // Counted: no refusal, only the window it was counted in.
      expect(rows.filter((row: { retry_after_ms: unknown }) => row.retry_after_ms !== null)).toEqual([]);
      // The same number again, on this instance: it waits on the counter's lock.
      const retry = store.consumeStartBudgets({ budgets: [numbers], now });
      await waitFor(
        async () => {
          const waiting = await database.pool.query(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
          );
          return (waiting.rows[0] as { n: number }).n === 1;
        },
        10_000,
        'the retry to wait on the counter',
      );
      await first.query('COMMIT');
      expect(await retry).toEqual([]);
    } finally {
      first.release();
    }
    const counter = await database.pool.query('SELECT spent FROM verify_kit_start_budgets WHERE key = $1', [
      numbers.key,
    ]);
    expect(counter.rows).toEqual([{ spent: 1 }]);
    // Another number is refused: the one slot holds number-a.
    expect(await store.consumeStartBudgets({ budgets: [{ ...numbers, member: 'number-b' }], now })).toHaveLength(1);
  });
});
