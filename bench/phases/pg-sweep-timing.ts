/**
 * One timed multi-process sweep on PostgreSQL: every process swept at once, with the emulator's
 * CPU and the database's backends' CPU, and the grants it wrote.
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { Child } from '../ipc.ts';
import { cpuMs, round1, round3, type Cpu } from '../measure.ts';
import type { TestDatabase } from '../postgres.ts';
import type { PgSweepRun } from './pg-sweep-figures.ts';

/**
 * CPU of the server's backends on one database while something runs: sampled from /proc (10 ms
 * ticks) every 200 ms, since a sweep's connections end with it; the last 200 ms of each is missed.
 */
function backendCpuSampler(pool: TestDatabase['pool']) {
  const seen = new Map<number, number>();
  const sample = async () => {
    const { rows } = await pool.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE datname = current_database()',
    );
    for (const { pid } of rows) {
      try {
        const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
        seen.set(pid, Math.max(seen.get(pid) ?? 0, (Number(fields[11]) + Number(fields[12])) * 10));
      } catch {
        // a backend that ended meanwhile
      }
    }
  };
  return {
    async start() {
      await sample();
      const before = new Map(seen);
      const timer = setInterval(() => void sample().catch(() => undefined), 200);
      return async () => {
        clearInterval(timer);
        let ms = 0;
        for (const [pid, cpu] of seen) ms += cpu - (before.get(pid) ?? 0);
        return ms;
      };
    },
  };
}

/** What one process of a multi-process sweep reports. */
export interface ProcessResult {
  fulfilled: number;
  cpuMs: number;
  peakRssKiB: number;
}

/**
 * Runs `sweep` on every child at once (they are started and loaded already, so no start-up is
 * timed), with the emulator's and the database's CPU, and reads the grants written.
 */
export async function timedPgSweep(
  database: TestDatabase,
  emulator: Child,
  children: Child[],
  sweep: (child: Child) => Promise<ProcessResult>,
): Promise<Omit<PgSweepRun, 'fractionOfRaw'>> {
  const e0 = await emulator.call<Cpu>('cpu');
  const stopBackends = await backendCpuSampler(database.pool).start();
  const w0 = performance.now();
  const results = await Promise.all(children.map(sweep));
  const wallMs = performance.now() - w0;
  const e1 = await emulator.call<Cpu>('cpu');
  const backendMs = await stopBackends();
  const fulfilled = results.reduce((sum, r) => sum + r.fulfilled, 0);
  const grantsSql = 'SELECT count(*)::int AS n, count(DISTINCT session_id)::int AS d FROM bench_grants';
  const { rows } = await database.pool.query(grantsSql);
  const attemptsPerSecond = fulfilled / (wallMs / 1000);
  return {
    wallMs: Math.round(wallMs),
    fulfilledByProcess: results.map((r) => r.fulfilled),
    attemptsPerSecond: round1(attemptsPerSecond),
    grants: rows[0].n,
    distinctGrants: rows[0].d,
    peakRssMiB: results.map((r) => round1(r.peakRssKiB / 1024)),
    sweepCpuMsPerAttempt: round3(results.reduce((sum, r) => sum + r.cpuMs, 0) / fulfilled),
    emulatorCpuMsPerAttempt: round3(cpuMs(e0, e1) / fulfilled),
    postgresCpuMsPerAttempt: round3(backendMs / fulfilled),
  };
}
