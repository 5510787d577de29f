/**
 * The two sides of the sweep on PostgreSQL: the kit's sweep processes over the kit's store, and the
 * hand-written floor over its own table, each on a fresh database seeded with the same sessions.
 */
import { createPostgresStore } from '../../middleware/store/postgres/postgres.ts';
import type { FloorResult } from '../children/pg-sweep-floor-child.ts';
import type { SweepChildResult } from '../children/sweep-child.ts';
import {
  ACTION,
  PG_BASELINE_ATTEMPTS_TABLE,
  PG_BASELINE_SEED_ATTEMPTS,
  PG_GRANTS_TABLE,
  PG_SEED_ATTEMPTS,
  seedPostgres,
  SUCCESS_PATH,
  type SeedAttempt,
} from '../common.ts';
import { config, sweepConcurrency } from '../config.ts';
import { spawnChild, type Child } from '../ipc.ts';
import { log } from '../measure.ts';
import { createTestDatabase, type TestDatabase } from '../postgres.ts';
import { timedPgSweep } from './pg-sweep-timing.ts';

/** Adds `sessions` to the kit's store as attempts started 10 minutes ago and due a minute ago. */
export async function seedDueAttempts(database: TestDatabase, sessions: SeedAttempt[]): Promise<void> {
  const now = Date.now();
  await seedPostgres(database.pool, PG_SEED_ATTEMPTS, sessions, [ACTION, SUCCESS_PATH, now - 600_000, now - 60_000]);
  await database.pool.query('VACUUM ANALYZE verify_kit_attempts');
}

/**
 * A fresh database with the kit's store and `sessions` as due attempts, and the sweep processes
 * ready (each has answered, so a tsx start-up is not sweep time). The caller stops and drops them.
 */
export async function kitSweepDatabase(
  sessions: SeedAttempt[],
): Promise<{ database: TestDatabase; children: Child[] }> {
  const database = await createTestDatabase({ max: 4 });
  try {
    const store = createPostgresStore({ pool: database.pool });
    await store.ready;
    await database.pool.query(PG_GRANTS_TABLE);
    await seedDueAttempts(database, sessions);
  } catch (error) {
    await database.drop();
    throw error;
  }
  const children = Array.from({ length: config.pgSweepProcesses }, () =>
    spawnChild('./children/sweep-child.ts', 'sweep'),
  );
  await Promise.all(children.map((c) => c.call('ping').catch(() => undefined)));
  return { database, children };
}

/** The kit's sweep processes over the kit's store, seeded with `sessions` as due attempts. */
export async function kitPgSweep(sessions: SeedAttempt[], common: object, emulator: Child) {
  const { database, children } = await kitSweepDatabase(sessions);
  try {
    const args = {
      ...common,
      databaseUrl: database.url,
      concurrency: config.sweepConcurrency,
      timeBudgetMs: config.sweepBudgetMs,
    };
    return await timedPgSweep(database, emulator, children, async (c) => {
      const r = await c.call<SweepChildResult>('sweep', args, config.sweepBudgetMs + 120_000);
      return { fulfilled: r.report.fulfilled, cpuMs: r.cpuUserMs + r.cpuSystemMs, peakRssKiB: r.peakRssKiB };
    });
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    await database.drop();
  }
}

/** The hand-written floor (bench/children/pg-sweep-floor-child.ts) over its own table, seeded with `sessions`. */
export async function floorPgSweep(sessions: SeedAttempt[], common: object, emulator: Child) {
  const database: TestDatabase = await createTestDatabase({ max: 2 });
  try {
    await database.pool.query(`${PG_BASELINE_ATTEMPTS_TABLE}; ${PG_GRANTS_TABLE}`);
    await seedPostgres(database.pool, PG_BASELINE_SEED_ATTEMPTS, sessions, [ACTION, SUCCESS_PATH, Date.now()]);
    await database.pool.query('VACUUM ANALYZE attempts');
    const shares = config.pgSweepProcesses;
    const children = Array.from({ length: shares }, () => spawnChild('./children/pg-sweep-floor-child.ts', 'floor'));
    try {
      const concurrency = sweepConcurrency;
      await Promise.all(
        children.map((c, share) =>
          c.call<number>(
            'load',
            { ...common, databaseUrl: database.url, share, shares, concurrency, grants: config.pgFloorGrants },
            120_000,
          ),
        ),
      );
      return await timedPgSweep(database, emulator, children, async (c) => {
        const r = await c.call<FloorResult>('run', undefined, config.sweepBudgetMs + 120_000);
        if (r.errors > 0) log(`pg-sweep floor: WARNING ${r.errors} reads were not verified with the stored state`);
        return r;
      });
    } finally {
      await Promise.all(children.map((c) => c.stop()));
    }
  } finally {
    await database.drop();
  }
}
