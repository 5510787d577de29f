/**
 * The sweep on PostgreSQL: several sweep processes at once over one database, against the
 * emulator's raw capacity at their combined concurrency and against a hand-written floor.
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { createPostgresStore } from '../../middleware/store/postgres/postgres.ts';
import type { FloorResult } from '../children/pg-sweep-floor-child.ts';
import type { RawResult, SweepChildResult } from '../children/sweep-child.ts';
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
import { sortedCopy } from '../load.ts';
import { cpuMs, log, round1, round3, spreadOf, type Cpu, type Spread } from '../measure.ts';
import { createTestDatabase, type TestDatabase } from '../postgres.ts';
import { resetEmulator, seedVerifiedSessions, type SeedClient } from '../seed.ts';

/** Throughput and CPU per fulfilled attempt of one multi-process sweep on PostgreSQL. */
export interface PgSweepRun {
  /** From the moment every process was asked to sweep until the last one finished, ms. */
  wallMs: number;
  fulfilledByProcess: number[];
  attemptsPerSecond: number;
  fractionOfRaw: number;
  grants: number;
  distinctGrants: number;
  peakRssMiB: number[];
  /** CPU ms per fulfilled attempt: the sweep processes (summed), the emulator, and the server's backends. */
  sweepCpuMsPerAttempt: number;
  emulatorCpuMsPerAttempt: number;
  postgresCpuMsPerAttempt: number;
}

export interface PgSweepFigures extends PgSweepRun {
  attempts: number;
  processes: number;
  seedMs: number;
  /** Raw GET /session capacity at the processes' combined concurrency, before and after. */
  rawConcurrency: number;
  rawBefore: number;
  rawAfter: number;
  rawCapacity: number;
  /**
   * The same attempts swept by hand with the least work per attempt (bench/children/pg-sweep-floor-child.ts):
   * a read and one statement, no claim. What this machine allows any sweep on PostgreSQL.
   */
  floor: PgSweepRun;
  /** The kit's rate over the floor's: the median of the rounds (the target), and their spread. */
  kitOverFloor: number;
  kitOverFloorSpread: Spread;
  /**
   * Kit over floor CPU ms per fulfilled attempt (the sweep processes' own, plus the PostgreSQL
   * backends' of the database read from /proc/<pid>/stat), every round's: the target is on the median.
   */
  kitOverFloorCpu: Spread;
  /** Every round, kit and floor, wrote one grant per attempt. */
  everyRoundOnce: boolean;
  floorGrants: 'batched' | 'each';
  /** Each round's rates, fractions of raw capacity (information) and CPU ms per attempt (sweep processes + PostgreSQL). */
  perRound: {
    kitRate: number;
    floorRate: number;
    kitOverFloor: number;
    kitFractionOfRaw: number;
    floorFractionOfRaw: number;
    kitCpuMsPerAttempt: number;
    floorCpuMsPerAttempt: number;
  }[];
}

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
interface ProcessResult {
  fulfilled: number;
  cpuMs: number;
  peakRssKiB: number;
}

/**
 * Runs `sweep` on every child at once (they are started and loaded already, so no start-up is
 * timed), with the emulator's and the database's CPU, and reads the grants written.
 */
async function timedPgSweep(
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
async function kitPgSweep(sessions: SeedAttempt[], common: object, emulator: Child) {
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
async function floorPgSweep(sessions: SeedAttempt[], common: object, emulator: Child) {
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

/**
 * The sweep on PostgreSQL: N due attempts (verified sessions) in one database, swept by several
 * sweep processes at once (SKIP LOCKED claims), against the emulator's raw capacity at their
 * combined concurrency, and against the hand-written floor over the same sessions.
 */
export async function pgSweepPhase(emulatorUrl: string, emulator: Child, client: SeedClient): Promise<PgSweepFigures> {
  await resetEmulator(emulatorUrl);
  const size = config.pgSweepSize;
  const t0 = performance.now();
  // One attempt per user: with the default ordering every one of them is the user's newest intent.
  const sessions = await seedVerifiedSessions(emulatorUrl, client, size, (i) => `bench-pg-sweeper-${i}`, {
    concurrency: config.seedConcurrency,
  });
  const seedMs = performance.now() - t0;
  log(`pg-sweep ${size}: seeded ${size} verified sessions in ${Math.round(seedMs)} ms`);
  const common = { dbPath: '', emulatorUrl, clientId: client.clientId, secret: client.secret };
  const rawConcurrency = sweepConcurrency * config.pgSweepProcesses;
  const before = await pgRawCapacity(sessions, common, rawConcurrency);
  log(`pg-sweep ${size}: raw capacity before ${Math.round(before.rps)} req/s at concurrency ${rawConcurrency}`);
  const rounds = await kitAndFloorRounds(sessions, common, emulator);
  const after = await pgRawCapacity(sessions, common, rawConcurrency);
  log(`pg-sweep ${size}: raw capacity after ${Math.round(after.rps)} req/s`);
  return pgSweepFigures({ size, seedMs, rawConcurrency, before, after, rounds });
}

/**
 * `pgSweepRounds` rounds of the kit's sweep and the floor over the same sessions, in ABBA order
 * (kit first in even rounds), each on a fresh database: the target is judged on the median round.
 */
async function kitAndFloorRounds(sessions: SeedAttempt[], common: object, emulator: Child): Promise<Round[]> {
  const rounds: Round[] = [];
  for (let r = 0; r < config.pgSweepRounds; r++) {
    const kitFirst = r % 2 === 0;
    const first = kitFirst
      ? await kitPgSweep(sessions, common, emulator)
      : await floorPgSweep(sessions, common, emulator);
    const second = kitFirst
      ? await floorPgSweep(sessions, common, emulator)
      : await kitPgSweep(sessions, common, emulator);
    const [kit, floor] = kitFirst ? [first, second] : [second, first];
    rounds.push({ kit, floor });
    log(
      `pg-sweep round ${r + 1}/${config.pgSweepRounds}: kit ${kit.attemptsPerSecond}/s (${kit.fulfilledByProcess.join(' + ')}), ` +
        `floor ${floor.attemptsPerSecond}/s, kit/floor ${round3(kit.attemptsPerSecond / floor.attemptsPerSecond)}`,
    );
  }
  return rounds;
}

/** The emulator's raw GET /session capacity over the seeded sessions, from a fresh process. */
async function pgRawCapacity(sessions: SeedAttempt[], common: object, rawConcurrency: number): Promise<RawResult> {
  const child = spawnChild('./children/sweep-child.ts', 'raw');
  try {
    const sessionIds = sessions.map((a) => a.sessionId);
    const args = {
      ...common,
      sessionIds,
      concurrency: rawConcurrency,
      total: config.rawRequests,
      maxMs: config.rawMaxMs,
    };
    return await child.call<RawResult>('raw', args);
  } finally {
    await child.stop();
  }
}

type TimedRun = Omit<PgSweepRun, 'fractionOfRaw'>;
interface Round {
  kit: TimedRun;
  floor: TimedRun;
}

const cpuPerAttempt = (r: TimedRun) => round3(r.sweepCpuMsPerAttempt + r.postgresCpuMsPerAttempt);

function pgSweepFigures(m: {
  size: number;
  seedMs: number;
  rawConcurrency: number;
  before: RawResult;
  after: RawResult;
  rounds: Round[];
}): PgSweepFigures {
  const ratios = m.rounds.map((r) => round3(r.kit.attemptsPerSecond / r.floor.attemptsPerSecond));
  const spread = spreadOf(ratios);
  // The kit and floor shown in full are the median round's.
  const { kit, floor } = m.rounds[ratios.indexOf(sortedCopy(ratios)[Math.ceil(ratios.length / 2) - 1]!)]!;
  const everyOnce = m.rounds.every(
    (r) => r.kit.grants === m.size && r.kit.distinctGrants === m.size && r.floor.distinctGrants === m.size,
  );
  const rawCapacity = (m.before.rps + m.after.rps) / 2;
  const withFraction = (r: TimedRun): PgSweepRun => ({
    ...r,
    fractionOfRaw: round3(r.attemptsPerSecond / rawCapacity),
  });
  return {
    ...withFraction(kit),
    attempts: m.size,
    processes: config.pgSweepProcesses,
    seedMs: Math.round(m.seedMs),
    rawConcurrency: m.rawConcurrency,
    rawBefore: round1(m.before.rps),
    rawAfter: round1(m.after.rps),
    rawCapacity: round1(rawCapacity),
    floor: withFraction(floor),
    kitOverFloor: spread.median,
    kitOverFloorSpread: spread,
    kitOverFloorCpu: spreadOf(m.rounds.map((r) => round3(cpuPerAttempt(r.kit) / cpuPerAttempt(r.floor)))),
    everyRoundOnce: everyOnce,
    floorGrants: config.pgFloorGrants,
    perRound: m.rounds.map((r, i) => ({
      kitRate: r.kit.attemptsPerSecond,
      floorRate: r.floor.attemptsPerSecond,
      kitOverFloor: ratios[i]!,
      kitFractionOfRaw: round3(r.kit.attemptsPerSecond / rawCapacity),
      floorFractionOfRaw: round3(r.floor.attemptsPerSecond / rawCapacity),
      kitCpuMsPerAttempt: cpuPerAttempt(r.kit),
      floorCpuMsPerAttempt: cpuPerAttempt(r.floor),
    })),
  };
}
