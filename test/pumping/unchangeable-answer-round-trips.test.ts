/**
 * A check whose answer no count can change counts on its first reading on PostgreSQL, however
 * many others count before it: it is never read again in a transaction behind the counters' lock
 * (BEGIN, lockPumping, countPumping, COMMIT) only to reach the same answer. In record mode (the
 * default) a start that trips a rule is sent whatever the counts say (only an operator's block,
 * no count, refuses it); a start to a country an operator released is judged by no rule of that
 * country. Before, both were counted with no headroom: during an attack every start to the country
 * that another's count beat waited behind its lock, holding a pool connection (a lone start 3 round
 * trips, a beaten one 7). Forced: the first start's count is held until the second is answered.
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

describe.skipIf(postgresUnavailable !== undefined)('record mode on a tripped country (PostgreSQL)', () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  let guard: PumpingGuard;
  let store: ReturnType<typeof createPostgresStore>;
  let counted: RoundTripPool;
  beforeAll(async () => {
    database = await createTestDatabase();
    counted = roundTripPool(database.url, 6);
    pool = counted.pool;
    store = createPostgresStore({ pool });
    await store.ready;
    guard = testGuard(
      store.pumping,
      {
        mode: 'record',
        thresholds: { address: { dailyFloor: 100_000, hourlyFloor: 100_000 } },
      },
      NOW,
    );
  });
  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  const req = { ip: '192.0.2.10', socket: {}, body: {} } as unknown as Request;
  const start = (phone: string, user: string) => startAnswer(guard, req, phone, user);

  it('a warned start counts on its first reading: no count can change a record-mode answer', async () => {
    // Four Nigerian texts never verified trip the country's hourly rule (3.33).
    for (const phone of ['+2348031000001', '+2348032000001', '+2348033000001', '+2348034000001']) {
      expect(await start(phone, `setup-${phone}`)).toBe('sent');
    }
    await pairAgainstAlone('+23480370', '+23480350', '+23480360', 'r');
  });

  it('a start to a country an operator released counts on its first reading (refuse mode)', async () => {
    // What docs/sms-pumping.md tells the operator of a held country to do: `fraud release --country NG`.
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
      key: 'NG',
      rule: 'allow',
      until: NOW + 3_600_000,
      setAt: NOW,
    });
    expect(await start('+2348041000001', 'warm-up-a')).toBe('sent'); // this guard's purge, once per five minutes
    await pairAgainstAlone('+23480380', '+23480390', '+23480400', 'a');
  });

  /** A lone start's round trips against those of a start whose count one concurrent count beat. */
  async function pairAgainstAlone(lone: string, firstPhone: string, secondPhone: string, tag: string) {
    // A lone warned start: its reading, its count, its decision's record.
    let before = counted.trips();
    counted.log.length = 0;
    expect(await start(`${lone}00001`, `alone-${tag}`)).toBe('sent');
    const alone = counted.trips() - before;
    const aloneLog = counted.log.join(' ');

    const { reached: counting, go } = counted.holdCountOf(`first-${tag}`);
    before = counted.trips();
    counted.log.length = 0;
    const one = start(`${firstPhone}00001`, `first-${tag}`);
    await counting;
    const firstBeforeSecond = counted.trips() - before;
    expect(await start(`${secondPhone}00001`, `second-${tag}`)).toBe('sent');
    const afterSecond = counted.trips();
    const secondLog = counted.log.join(' ');
    counted.log.length = 0;
    go();
    expect(await one).toBe('sent');
    const first = firstBeforeSecond + (counted.trips() - afterSecond);
    expect(
      first,
      `round trips of a start sent: alone ${alone} (${aloneLog}); beaten by one concurrent count ${first} (after the second: ${counted.log.join(' ')}; up to it: ${secondLog})`,
    ).toBe(alone);
  }
});
