/**
 * A refusal does not teach the attacker the rule, by its timing either. On PostgreSQL a start
 * refused by an operator's block counts nothing, yet it must make the same database round trips
 * as one refused by the counts (the reading, then the count's statement): with the database a
 * round trip away, a block's 429 would otherwise come that much sooner, and tell the two apart.
 */
import type { Request } from 'express';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PumpingGuard } from '../../middleware/pumping/pumping-guard.ts';
import { createPostgresStore } from '../../middleware/store/postgres/postgres.ts';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../support/postgres.ts';
import { testGuard } from '../support/pumping-guard.ts';

/** A database a round trip away (another host, another zone). */
const ROUND_TRIP_MS = 40;
/** Ten minutes into an hour. */
const NOW = (Math.floor(Date.now() / 3_600_000) + 5) * 3_600_000 + 10 * 60_000;

describe.skipIf(postgresUnavailable !== undefined)('refusal by block or by count on PostgreSQL', () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  let guard: PumpingGuard;
  let sent = 0;
  beforeAll(async () => {
    database = await createTestDatabase();
    pool = new pg.Pool({ connectionString: database.url, max: 4 });
    const store = createPostgresStore({ pool });
    await store.ready;
    const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
    (pool as unknown as { query: unknown }).query = async (...args: unknown[]) => {
      sent += 1;
      await new Promise((resolve) => setTimeout(resolve, ROUND_TRIP_MS));
      return query(...args);
    };
    guard = testGuard(
      store.pumping,
      {
        mode: 'refuse',
        thresholds: { address: { dailyFloor: 100_000, hourlyFloor: 100_000 } },
        // A CAPTCHA provider's round trip; the attacker's token fails.
        challenge: { verify: async () => (await new Promise((r) => setTimeout(r, 100)), false) },
      },
      NOW,
    );
    await store.pumping.setRule({ dimension: 'country', key: 'GH', rule: 'block', until: NOW + 3_600_000, setAt: NOW });
  });
  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  const req = { ip: '192.0.2.10', socket: {}, body: {} } as unknown as Request;
  const start = (phone: string) => guard(req, { userRef: `someone-${phone}`, destination: phone });

  async function refusal(phone: string): Promise<{ ms: number; trips: number }> {
    const before = sent;
    const at = performance.now();
    const outcome = await start(phone).then(
      () => 'sent',
      (error: { code?: string }) => error.code,
    );
    expect(outcome).toBe('rate_limited');
    return { ms: performance.now() - at, trips: sent - before };
  }

  it("a block's 429 makes as many database round trips as a 429 by the counts", async () => {
    // Four Nigerian texts never verified trip the country's hourly rule.
    for (const phone of ['+2348031000001', '+2348032000001', '+2348033000001', '+2348034000001']) {
      await start(phone);
    }
    const byCount = await refusal('+2348035000001');
    const byBlock = await refusal('+233201234567');
    expect(byBlock.trips, `database round trips of the 429 (ms: by block ${byBlock.ms}, by count ${byCount.ms})`).toBe(
      byCount.trips,
    );
  });
});
