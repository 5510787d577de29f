/**
 * A known user (a code entered, no text left unverified) is not judged by the country's or the
 * block's rules, whatever their counts; only their own key can make them unknown, and it has no
 * headroom. So while their country is attacked (refuse mode: every attack start counts a refusal
 * under it) a known user's start counts on its first reading on PostgreSQL. Before, the country had
 * the headroom of its rules as if judged (none once tripped): each such start beaten by an attack's
 * refusal was read again behind the country's counter lock (2 round trips alone, 6 beaten).
 * Forced: the known user's count is held until an attack start is refused.
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

describe.skipIf(postgresUnavailable !== undefined)('a known user of an attacked country (PostgreSQL)', () => {
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
        mode: 'refuse',
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

  it("a known user's start counts on its first reading while an attack is refused on their country", async () => {
    // The user's first text, verified: a known user.
    const pass = await guard(req, { userRef: 'known', destination: '+2348050000001' });
    await pass!.sent('session-known-1');
    expect(await store.pumping!.markVerified('session-known-1')).toBe(true);
    // Four Nigerian texts never verified trip the country's hourly rule (3.33).
    for (const phone of ['+2348031000001', '+2348032000001', '+2348033000001', '+2348034000001']) {
      expect(await start(phone, `setup-${phone}`)).toBe('sent');
    }
    expect(await start('+2348036000001', 'attack-0')).toBe('rate_limited');
    // Alone, the known user's start: its reading and its count.
    let before = counted.trips();
    counted.log.length = 0;
    expect(await start('+2348050000001', 'known')).toBe('sent');
    const alone = counted.trips() - before;
    const aloneLog = counted.log.join(' ');
    await store.pumping!.releaseSend({
      keys: [
        { dimension: 'country', key: 'NG' },
        { dimension: 'block', key: '+2348050000' },
        { dimension: 'address', key: '192.0.2.10' },
        { dimension: 'user', key: 'known' },
        { dimension: 'address_country', key: '192.0.2.10 NG' },
      ],
      hour: Math.floor(NOW / 3_600_000),
    }); // that text never sent: the user is known again

    // The known user's start, its count beaten by one attack start refused on NG.
    const { reached: counting, go } = counted.holdCountOf('known');
    before = counted.trips();
    counted.log.length = 0;
    const one = start('+2348050000001', 'known');
    await counting;
    const firstBeforeAttack = counted.trips() - before;
    expect(await start('+2348037000001', 'attack-1')).toBe('rate_limited');
    const afterAttack = counted.trips();
    counted.log.length = 0;
    go();
    expect(await one).toBe('sent');
    const beaten = firstBeforeAttack + (counted.trips() - afterAttack);
    expect(
      beaten,
      `round trips of the known user's start: alone ${alone} (${aloneLog}); beaten by one refusal ${beaten} (after it: ${counted.log.join(' ')})`,
    ).toBe(alone);
  });
});
