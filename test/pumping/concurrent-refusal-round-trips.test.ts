/**
 * A refusal must not teach the attacker the rule, by its timing either, in a burst too. Two of the
 * attacker's starts checked at once, the first one's count reaching the database after the second
 * is done: refused by the counts, the second's refusal presses the key the first read, and the
 * first's count failed (no headroom) and read again, locked, in a transaction: four more round
 * trips (BEGIN, lockPumping, countPumping, COMMIT). Refused by an operator's block, the second
 * counts nothing and the first's count stood: two. A refusal's count now stands whatever others
 * counted (more counts never make it a text): the same round trips either way.
 */
import type { Request } from 'express';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PumpingGuard } from '../../middleware/pumping/pumping-guard.ts';
import { createPostgresStore } from '../../middleware/store/postgres/postgres.ts';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../support/postgres.ts';
import { roundTripPool, type RoundTripPool } from '../support/round-trip-pool.ts';
import { startAnswer, testGuard } from '../support/pumping-guard.ts';

const NOW = (Math.floor(Date.now() / 3_600_000) + 5) * 3_600_000 + 10 * 60_000;

describe.skipIf(postgresUnavailable !== undefined)('concurrent refusals by block or by count on PostgreSQL', () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  let guard: PumpingGuard;
  let counted: RoundTripPool;
  beforeAll(async () => {
    database = await createTestDatabase();
    counted = roundTripPool(database.url, 6);
    pool = counted.pool;
    const store = createPostgresStore({ pool });
    await store.ready;
    guard = testGuard(
      store.pumping,
      {
        mode: 'refuse',
        thresholds: { address: { dailyFloor: 100_000, hourlyFloor: 100_000 } },
      },
      NOW,
    );
    await store.pumping!.setRule({
      dimension: 'country',
      key: 'GH',
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
  const start = (phone: string, user: string) => startAnswer(guard, req, phone, user);

  /** Two starts at once, the first's count held until the second is answered: the pair's round trips. */
  async function pair(first: string, second: string, tag: string): Promise<number> {
    const { reached: counting, go } = counted.holdCountOf(`first-${tag}`);
    const before = counted.trips();
    counted.log.length = 0;
    const one = start(first, `first-${tag}`);
    // The first has read and decided (its count is sent) before the second starts.
    await counting;
    const two = await start(second, `second-${tag}`);
    go();
    expect([await one, two]).toEqual(['rate_limited', 'rate_limited']);
    return counted.trips() - before;
  }

  it('a burst of 429s by the counts makes as many round trips as a burst of 429s by a block', async () => {
    // Four Nigerian texts never verified trip the country's hourly rule.
    for (const phone of ['+2348031000001', '+2348032000001', '+2348033000001', '+2348034000001']) {
      await start(phone, `setup-${phone}`);
    }
    const byCount = await pair('+2348035000001', '+2348036000001', 'count');
    const byBlock = await pair('+233201234567', '+233201234568', 'block');
    expect(
      byBlock,
      `round trips of two concurrent 429s: by count ${byCount}, by block ${byBlock}: ${counted.log.join(' ')}`,
    ).toBe(byCount);
  });
});
