/**
 * PostgreSQL may end one of two transactions that wait on each other (40P01, a deadlock) or that
 * cannot be serialised (40001). The store retries such a transaction (or statement) instead of
 * failing a landing with a 500 or losing a sweep's reschedules.
 */
import type { PoolClient } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transactionOn } from '../../middleware/store/postgres/postgres-query.ts';
import { startTestApp } from '../support/app.ts';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../support/postgres.ts';
import { newSeen } from '../support/seen.ts';

const suite = postgresUnavailable === undefined ? describe : describe.skip;

suite('PostgreSQL deadlocks', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
    await database.pool.query('CREATE TABLE rows (id INTEGER PRIMARY KEY, v INTEGER NOT NULL)');
    await database.pool.query("SET deadlock_timeout = '100ms'");
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('retries the transaction PostgreSQL chose as a deadlock victim: both commit, nothing is lost', async () => {
    await database.pool.query('DELETE FROM rows; INSERT INTO rows VALUES (1, 0), (2, 0)');
    // Each takes its first row, waits until the other has its own, then wants the other's: a deadlock,
    // the first time round only.
    let holding = 0;
    let release: () => void = () => {};
    const bothHold = new Promise<void>((resolve) => (release = resolve));
    const cross = (first: number, second: number) =>
      transactionOn(database.pool, async (client) => {
        await client.query("SET LOCAL deadlock_timeout = '100ms'");
        await client.query('UPDATE rows SET v = v + 1 WHERE id = $1', [first]);
        if (++holding === 2) release();
        await bothHold;
        await client.query('UPDATE rows SET v = v + 1 WHERE id = $1', [second]);
      });
    const results = await Promise.allSettled([cross(1, 2), cross(2, 1)]);
    expect(results.map((r) => (r.status === 'rejected' ? String((r.reason as { code?: string }).code) : 'ok'))).toEqual(
      ['ok', 'ok'],
    );
    const { rows } = await database.pool.query<{ id: number; v: number }>('SELECT id, v FROM rows ORDER BY id');
    expect(rows).toEqual([
      { id: 1, v: 2 },
      { id: 2, v: 2 },
    ]);
  });

  it('landings and two sweeps at once over overlapping attempts: no 500, no lost reschedule, every attempt settled', async () => {
    const flowDatabase = await createTestDatabase();
    const app = await startTestApp({ database: { url: flowDatabase.url } });
    try {
      const seen = newSeen();
      // Six users, three attempts each of one 'latest' action: the newest one's fulfilment supersedes
      // the older ones, which the sweeps hold leased and reschedule at the same time.
      const users = await Promise.all(Array.from({ length: 6 }, (_, i) => app.agent(seen).signIn(`racer${i}`)));
      const started = [];
      for (const user of users) {
        for (let k = 0; k < 3; k++) started.push({ user, attempt: await user.start('grant') });
      }
      const newest = started.filter((_, i) => i % 3 === 2);
      // The newest ones are verified; the older ones still pending at the service.
      for (const { attempt } of newest) await app.emulator.control.complete(attempt.sessionId, { outcome: 'verified' });
      const { landings, sweeps } = await app.clock.shifted(10 * 60_000, async () => {
        const sweeping = Promise.all([app.kit.runSweep({ concurrency: 8 }), app.kit.runSweep({ concurrency: 8 })]);
        const landing = Promise.all(newest.map(({ user, attempt }) => user.landFor(attempt.sessionId, attempt.state)));
        return { landings: await landing, sweeps: await sweeping };
      });
      expect(landings.map((answer) => answer.status).filter((status) => status >= 500)).toEqual([]);
      expect(sweeps.map((report) => report.errors)).toEqual([0, 0]);
      const outcomes = await Promise.all(started.map(({ attempt }) => app.attempt(attempt.sessionId)));
      for (const [i, record] of outcomes.entries()) {
        expect(record?.outcome).toBe(i % 3 === 2 ? 'fulfilled' : 'superseded');
      }
      // Nothing left leased: every claim was rescheduled, settled or released.
      const leased = await app.query<{ n: string }>(
        'SELECT count(*) AS n FROM verify_kit_attempts WHERE lease_owner IS NOT NULL',
      );
      expect(Number(leased[0]!.n)).toBe(0);
    } finally {
      await app.close();
      await flowDatabase.drop();
    }
  });
});

suite('a PostgreSQL fulfil past its deadline', () => {
  it('rolls back (its connection is ended, nothing late commits), answers the landing, and the sweep fulfils it later', async () => {
    const database = await createTestDatabase();
    let hang = true;
    let lateWrites = 0;
    let lateAttempts = 0;
    const app = await startTestApp({
      database: { url: database.url },
      kit: {
        hookTimeouts: { fulfil: 300 },
        actions: [
          {
            name: 'grant',
            operationSensitivity: 'normal',
            successPath: '/done',
            fulfil: async (tx, attempt) => {
              const client = tx as PoolClient;
              if (hang) {
                await new Promise((resolve) => setTimeout(resolve, 1500));
                // Too late: this client's transaction was abandoned; the write must not land.
                lateAttempts++;
                await client
                  .query('CREATE TABLE IF NOT EXISTS late (session_id TEXT); INSERT INTO late VALUES ($1)', [
                    attempt.sessionId,
                  ])
                  .then(() => lateWrites++)
                  .catch(() => undefined);
                return;
              }
              await client.query('CREATE TABLE IF NOT EXISTS done (session_id TEXT)');
              await client.query('INSERT INTO done VALUES ($1)', [attempt.sessionId]);
            },
          },
        ],
      },
    });
    try {
      const alice = await app.agent(newSeen()).signIn('alice');
      const started = await alice.start('grant');
      await app.emulator.control.complete(started.sessionId, { outcome: 'verified' });
      const startedAt = performance.now();
      const landed = await alice.landFor(started.sessionId, started.state);
      expect(landed.status).toBe(500);
      expect(performance.now() - startedAt).toBeLessThan(1400);
      expect((await app.attempt(started.sessionId))?.outcome).toBe('pending');
      await new Promise((resolve) => setTimeout(resolve, 1800));
      // The late write was tried (the hung action did run on), and refused.
      expect(lateAttempts).toBe(1);
      expect(lateWrites).toBe(0);
      hang = false;
      const report = await app.clock.shifted(10 * 60_000, () => app.kit.runSweep());
      expect(report.fulfilled).toBe(1);
      expect((await app.attempt(started.sessionId))?.outcome).toBe('fulfilled');
      expect(await app.query('SELECT session_id FROM done')).toEqual([{ session_id: started.sessionId }]);
    } finally {
      await app.close();
      await database.drop();
    }
  });
});
