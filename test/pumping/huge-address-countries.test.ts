/**
 * `pumping.thresholds.addressCountries` takes any positive number, and an app that turns the
 * address_countries rule off in effect (`Number.MAX_SAFE_INTEGER`: an office address texting many
 * countries) gets every start no other rule refuses sent, on both stores. On PostgreSQL the count
 * compares the countries an address may have texted (those unverified plus the verdict's headroom)
 * as an integer: their sum, past PostgreSQL's largest, failed every start from an address with one
 * country unverified (22003 "value out of range"), however clean its counts.
 */
import type { Request } from 'express';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PumpingGuard } from '../../middleware/pumping/pumping-guard.ts';
import { createPostgresStore } from '../../middleware/store/postgres/postgres.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import type { PumpingStore } from '../../middleware/store/types.ts';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../support/postgres.ts';
import { testGuard } from '../support/pumping-guard.ts';

const NOW = (Math.floor(Date.now() / 3_600_000) + 5) * 3_600_000 + 10 * 60_000;

function guardOn(store: PumpingStore | undefined): PumpingGuard {
  return testGuard(
    store,
    {
      mode: 'refuse',
      thresholds: { addressCountries: Number.MAX_SAFE_INTEGER },
    },
    NOW,
  );
}

const req = { ip: '192.0.2.10', socket: {}, body: {} } as unknown as Request;
const start = (guard: PumpingGuard, phone: string, user: string) =>
  guard(req, { userRef: user, destination: phone }).then(
    () => 'sent',
    (error: { code?: string; message?: string }) => `${error.code ?? 'error'}: ${error.message}`,
  );

async function twoCountries(guard: PumpingGuard): Promise<string[]> {
  // One text to France, not yet verified; then one to Germany from the same address.
  return [await start(guard, '+33612345678', 'user-1'), await start(guard, '+4915112345678', 'user-2')];
}

it('SQLite: the second country from an address is sent', async () => {
  const store = createSqliteStore({ database: ':memory:' });
  try {
    expect(await twoCountries(guardOn(store.pumping))).toEqual(['sent', 'sent']);
  } finally {
    store.close();
  }
});

describe.skipIf(postgresUnavailable !== undefined)('PostgreSQL', () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  beforeAll(async () => {
    database = await createTestDatabase();
    pool = new pg.Pool({ connectionString: database.url, max: 4 });
  });
  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  it('the second country from an address is sent', async () => {
    const store = createPostgresStore({ pool });
    await store.ready;
    expect(await twoCountries(guardOn(store.pumping))).toEqual(['sent', 'sent']);
  });
});
