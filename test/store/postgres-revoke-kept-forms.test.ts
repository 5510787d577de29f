/**
 * A revocation on PostgreSQL and a form kept at the same moment: the revocation queues behind the
 * user's keep (the same advisory lock), so no form kept before the revocation returns outlives it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPostgresStore, type PostgresStore } from '../../middleware/store/postgres/postgres.ts';
import { SQL } from '../../middleware/store/postgres/postgres-sql.ts';
import type { NewStepUpIntent } from '../../middleware/store/types.ts';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../support/postgres.ts';
import { waitFor } from '../support/wait-for.ts';

let database: TestDatabase;
let store: PostgresStore;

function kept(id: string): NewStepUpIntent {
  return {
    intentId: id,
    userRef: 'user-1',
    scope: 'payout',
    browserSession: 'browser-1',
    resourceKey: 'acct-1',
    method: 'POST',
    path: '/accounts/acct-1/payee',
    fields: { iban: `IBAN-${id}` },
    createdAt: 1_000,
    expiresAt: 900_000,
  };
}

async function keptIds(): Promise<string[]> {
  const { rows } = await database.pool.query<{ intent_id: string }>('SELECT intent_id FROM verify_kit_intents');
  return rows.map((row) => row.intent_id).sort();
}

async function lockWaiters(): Promise<number> {
  const { rows } = await database.pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
  );
  return rows[0]?.n ?? 0;
}

describe.skipIf(postgresUnavailable !== undefined)('revoking while a form is kept, on PostgreSQL', () => {
  beforeEach(async () => {
    database = await createTestDatabase();
    store = createPostgresStore({ pool: database.pool });
    await store.ready;
  });
  afterEach(async () => {
    await database.drop();
  });

  it('waits for a keep under way and deletes its form, which committed before the revocation returned', async () => {
    const form = kept('intent-1');
    const { intentId, userRef, scope, browserSession, resourceKey, method, path, fields } = form;
    const row = [intentId, userRef, scope, browserSession, resourceKey, method, path, JSON.stringify(fields)];
    const values = [...row, form.createdAt, form.expiresAt, 20];
    // The keep holds the user's lock and has stored its form, not committed yet, when the user signs out.
    const keeping = await database.pool.connect();
    let revoked = false;
    try {
      await keeping.query('BEGIN');
      await keeping.query(SQL.lockUserIntents, [userRef]);
      expect((await keeping.query(SQL.insertIntent, values)).rowCount).toBe(1);
      const revocation = store.stepUp.revokeGrants({ userRef, now: 2_000 }).finally(() => (revoked = true));
      await waitFor(async () => revoked || (await lockWaiters()) === 1, 10_000, 'the revocation to wait or return');
      await keeping.query('COMMIT');
      await revocation;
    } finally {
      keeping.release();
    }
    expect(await keptIds()).toEqual([]);
  });
});
