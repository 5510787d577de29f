/**
 * What the rate-limited phase reads back from the sweeps' database: the limit their shared pace
 * learned, how often that pace was written, and the grants of the sweeps and of the landings.
 */
import type { TestDatabase } from '../postgres.ts';
import { round1 } from '../measure.ts';
import { LANDER } from './rate-limited-landings.ts';

/** The limit the sweep processes' shared pace holds (the kit's pace row). */
export async function learnedLimit(database: TestDatabase): Promise<number | null> {
  const { rows } = await database.pool.query<{ limit_per_second: number | null }>(
    'SELECT limit_per_second FROM verify_kit_sweep_pace WHERE id = 1',
  );
  const limit = rows[0]?.limit_per_second ?? null;
  return limit === null ? null : round1(limit);
}

/** How often the sweeps' shared pace row was written (each write is a transaction of its own). */
export async function paceWrites(database: TestDatabase): Promise<number> {
  const { rows } = await database.pool.query<{ n: string }>(
    "SELECT n_tup_upd AS n FROM pg_stat_user_tables WHERE relname = 'verify_kit_sweep_pace'",
  );
  return Number(rows[0]?.n ?? 0);
}

/** The grants of the sweeps' attempts and of the landings', each with how many are distinct. */
export async function grantCounts(database: TestDatabase) {
  const { rows } = await database.pool.query<{ lander: boolean; n: number; d: number }>(
    `SELECT user_ref = $1 AS lander, count(*)::int AS n, count(DISTINCT session_id)::int AS d
       FROM bench_grants GROUP BY 1`,
    [LANDER],
  );
  const of = (lander: boolean) => rows.find((r) => r.lander === lander) ?? { n: 0, d: 0 };
  return { sweeps: of(false), landings: of(true) };
}
