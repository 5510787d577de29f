/**
 * A 429 from the SMS pumping check tells nothing by its timing: on PostgreSQL, from an address an
 * operator blocked, a start the app's allow-list covers (`alwaysAllow.countries: ['GB']`) is
 * refused after the same round trips as a start to any other country (its reading, its count,
 * its decision's record). Before, the allow-listed one made no count's round trip, so the
 * attacker whose address was blocked learned, from which 429s came sooner, which countries
 * (prefixes, users) the allow-list lets through unjudged: where to pump next.
 */
import type { Request } from 'express';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PumpingGuard } from '../../middleware/pumping/pumping-guard.ts';
import { createPostgresStore } from '../../middleware/store/postgres/postgres.ts';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../support/postgres.ts';
import { roundTripPool, type RoundTripPool } from '../support/round-trip-pool.ts';
import { testGuard } from '../support/pumping-guard.ts';

const NOW = (Math.floor(Date.now() / 3_600_000) + 5) * 3_600_000 + 10 * 60_000;

describe.skipIf(postgresUnavailable !== undefined)('a blocked address, allow-listed or not (PostgreSQL)', () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  let guard: PumpingGuard;
  let counted: RoundTripPool;
  beforeAll(async () => {
    database = await createTestDatabase();
    counted = roundTripPool(database.url, 4);
    pool = counted.pool;
    const store = createPostgresStore({ pool });
    await store.ready;
    guard = testGuard(store.pumping, { mode: 'refuse', alwaysAllow: { countries: ['GB'] } }, NOW);
    await store.pumping!.setRule({
      dimension: 'address',
      key: '192.0.2.10',
      rule: 'block',
      until: NOW + 3_600_000,
      setAt: NOW,
    });
  });
  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  const req = { ip: '192.0.2.10', socket: {}, body: {} } as unknown as Request;
  async function roundTrips(phone: string, user: string): Promise<{ trips: number; log: string }> {
    const before = counted.trips();
    counted.log.length = 0;
    const answer = await guard(req, { userRef: user, destination: phone }).then(
      () => 'sent',
      (error: { code?: string }) => error.code,
    );
    expect(answer).toBe('rate_limited');
    return { trips: counted.trips() - before, log: counted.log.join(' ') };
  }

  it('refuses a start the allow-list covers after as many round trips as any other', async () => {
    await roundTrips('+2348031000001', 'warm-up'); // runs the purge (once per five minutes)
    const judged = await roundTrips('+2348032000001', 'attacker-1');
    const allowListed = await roundTrips('+447400123456', 'attacker-2');
    expect(
      allowListed.trips,
      `round trips of the 429 from the blocked address: to NG ${judged.trips} (${judged.log}), to allow-listed GB ${allowListed.trips} (${allowListed.log})`,
    ).toBe(judged.trips);
  });
});
