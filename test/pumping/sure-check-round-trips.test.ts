/**
 * On PostgreSQL a start that no rule can refuse is checked in one statement: its text is counted as
 * its counters are read (sureCountPumping), within limits known before the reading (the floors, and
 * a busy country's thresholds from its reading earlier this hour). A start those limits cannot
 * vouch for is read, judged by the app and counted in a second (countPumping), as every start was.
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PumpingGuard } from '../../middleware/pumping/pumping-guard.ts';
import { startKeys } from '../../middleware/pumping/pumping-keys.ts';
import { createPostgresStore } from '../../middleware/store/postgres/postgres.ts';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../support/postgres.ts';
import { requestFrom, startAnswer, testGuard } from '../support/pumping-guard.ts';
import { roundTripPool, type RoundTripPool } from '../support/round-trip-pool.ts';

const HOUR = 3_600_000;
/** Ten minutes into an hour. */
const NOW = (Math.floor(Date.now() / HOUR) + 5) * HOUR + 10 * 60_000;

describe.skipIf(postgresUnavailable !== undefined)('the check of a start below every threshold (PostgreSQL)', () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  let counted: RoundTripPool;
  let guard: PumpingGuard;
  let store: ReturnType<typeof createPostgresStore>;
  beforeAll(async () => {
    database = await createTestDatabase();
    counted = roundTripPool(database.url, 4);
    pool = counted.pool;
    store = createPostgresStore({ pool });
    await store.ready;
    guard = testGuard(store.pumping, { mode: 'refuse' }, NOW);
    // Five hours ago the UK had 130 texts, 100 verified: 30 unverified today, above the country's
    // daily floor (20), below half of its verified (50).
    const hour = Math.floor(NOW / HOUR) - 5;
    for (let n = 0; n < 130; n++) {
      await store.pumping!.recordSend({ sessionId: `history-${n}`, keys: [{ dimension: 'country', key: 'GB' }], hour });
      if (n < 100) await store.pumping!.markVerified(`history-${n}`);
    }
  });
  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  async function statementsOf(phone: string, ip: string, by = guard): Promise<string[]> {
    counted.log.length = 0;
    expect(await startAnswer(by, requestFrom(ip), phone, `user-${phone}`)).toBe('sent');
    return [...counted.log];
  }

  it('counts a start below the floors in one statement, and one to a busy country once it was read this hour', async () => {
    // The guard's first start also purges (once per five minutes): a start to France takes it.
    await statementsOf('+33612345678', '192.0.2.1');
    expect(await statementsOf('+33612399999', '192.0.2.2')).toEqual(['verify_kit_sureCountPumping']);
    // The UK, not read yet this hour: its floors do not vouch for it, so the app judges its reading.
    expect(await statementsOf('+447400100001', '192.0.2.3')).toEqual([
      'verify_kit_sureCountPumping',
      'verify_kit_countPumping',
    ]);
    // Read now: its thresholds this hour are at least those it read, and the next start is one statement.
    expect(await statementsOf('+447400200002', '192.0.2.4')).toEqual(['verify_kit_sureCountPumping']);
  });

  it('judges on its reading a start whose hour before, counted whole, reaches a limit, though the rules weigh it less', async () => {
    // Fifty minutes into the next hour: the hour before weighs a sixth in the last 60 minutes.
    const late = (Math.floor(NOW / HOUR) + 1) * HOUR + 50 * 60_000;
    const hour = Math.floor(late / HOUR);
    const later = testGuard(store.pumping, { mode: 'refuse' }, late);
    await statementsOf('+33612300001', '192.0.2.30', later); // this guard's purge
    // Three texts to one block the hour before, none verified: half a text in the last 60 minutes,
    // under the block's hourly threshold of 3; counted whole, at it.
    const texted = startKeys('+4915112345001', '192.0.2.31', 'someone', undefined, 64).keys[1]!;
    for (let n = 0; n < 3; n++) {
      await store.pumping!.recordSend({ sessionId: `block-${n}`, keys: [texted], hour: hour - 1 });
    }
    expect(await statementsOf('+4915112345999', '192.0.2.32', later)).toEqual([
      'verify_kit_sureCountPumping',
      'verify_kit_countPumping',
    ]);
    // Fifteen refusals under an address the hour before: 2.5 in the last 60 minutes, under the press
    // that holds it (three times its hourly threshold of 5); counted whole, at it.
    const pressed = startKeys('+4915122233001', '192.0.2.40', 'someone', undefined, 64).keys[2]!;
    const refuse = () => ({ count: 'refusal' as const, keys: [pressed] });
    for (let n = 0; n < 15; n++) {
      await store.pumping!.reserveSend(
        { keys: [pressed], address: '192.0.2.40', hour: hour - 1, now: late - HOUR },
        refuse,
      );
    }
    expect(await statementsOf('+4915122233999', '192.0.2.40', later)).toEqual([
      'verify_kit_sureCountPumping',
      'verify_kit_countPumping',
    ]);
  });
});
