/**
 * The hand-written floor of the rate-limited phase: its own database and sweep processes
 * (bench/children/pg-sweep-floor-child.ts), as many as the kit's, reading at a given rate.
 */
import { DEFAULT_SWEEP_NICE } from '../../middleware/sweep/sweep-job-args.ts';
import type { FloorResult } from '../children/pg-sweep-floor-child.ts';
import {
  ACTION,
  PG_BASELINE_ATTEMPTS_TABLE,
  PG_BASELINE_SEED_ATTEMPTS,
  PG_GRANTS_TABLE,
  seedPostgres,
  SUCCESS_PATH,
  type SeedAttempt,
} from '../common.ts';
import { config, sweepConcurrency } from '../config.ts';
import { spawnChild, type Child } from '../ipc.ts';
import { createTestDatabase, type TestDatabase } from '../postgres.ts';

export interface FloorSweepers {
  database: TestDatabase;
  children: Child[];
  /** Adds the round's sessions to the floor's table and has each process load its share. */
  seed(sessions: SeedAttempt[], common: { emulatorUrl: string; clientId: string; secret: string }): Promise<void>;
  /** One run of every process, `readsPerSecond` between them all. */
  run(readsPerSecond: number): Promise<FloorResult[]>;
}

/** The hand-written floor's database and processes, as many as the kit's sweep processes. */
export async function floorSweepers(processes: number): Promise<FloorSweepers> {
  const database = await createTestDatabase({ max: 2 });
  await database.pool.query(`${PG_BASELINE_ATTEMPTS_TABLE}; ${PG_GRANTS_TABLE}`);
  const children = Array.from({ length: processes }, () => spawnChild('./children/pg-sweep-floor-child.ts', 'floor'));
  await Promise.all(children.map((c) => c.call('ping').catch(() => undefined)));
  return {
    database,
    children,
    async seed(sessions, common) {
      await seedPostgres(database.pool, PG_BASELINE_SEED_ATTEMPTS, sessions, [ACTION, SUCCESS_PATH, Date.now()]);
      // The last round's updates and grants vacuumed now, not by autovacuum during a window.
      await database.pool.query('VACUUM ANALYZE attempts');
      await database.pool.query('VACUUM ANALYZE bench_grants');
      const loadArgs = (share: number) => ({
        ...common,
        databaseUrl: database.url,
        share,
        shares: processes,
        concurrency: sweepConcurrency,
        grants: 'each', // the kit's action contract: a statement per attempt
        nice: DEFAULT_SWEEP_NICE,
      });
      await Promise.all(children.map((c, share) => c.call<number>('load', loadArgs(share), 120_000)));
    },
    run: (readsPerSecond) =>
      Promise.all(
        children.map((c) =>
          c.call<FloorResult>('run', { readsPerSecond: readsPerSecond / processes }, config.sweepBudgetMs + 120_000),
        ),
      ),
  };
}
