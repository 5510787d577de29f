/**
 * The sweep and the landings within the service's rate limit: the emulator answers 429 beyond R
 * status reads a second for the kit's client; two sweep processes work through N due attempts on
 * PostgreSQL while a steady stream of landings runs on a kit app on the same database and client
 * (so a landing's 429 slows those sweeps, as it would in production). The sweep processes take the
 * sweep job's CPU priority (nice 10, as `hosted-sms-verify-kit sweep` does). Measured: the
 * sweep's rate against 0.85 x (R minus the landings' reads), the share of reads answered 429, the
 * landings' p99 against their p99 with no sweep running, and every attempt fulfilled once.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_SWEEP_NICE } from '../../middleware/sweep/sweep-job-args.ts';
import type { SweepChildResult } from '../children/sweep-child.ts';

import type { SeedAttempt } from '../common.ts';
import { config } from '../config.ts';
import type { Child } from '../ipc.ts';
import { loadPool, percentile, sortedCopy } from '../load.ts';
import { log, round1, round2, round3 } from '../measure.ts';
import type { TestDatabase } from '../postgres.ts';
import { resetEmulator, seedVerifiedSessions, type SeedClient } from '../seed.ts';
import { kitSweepDatabase } from './pg-sweep.ts';
import { landingPath, login, seedSide, spawnApp, type Side } from './sides.ts';

/** A steady stream of landings: what they answered and how fast. */
export interface LandingStream {
  landings: number;
  statuses: Record<string, number>;
  p50: number;
  p99: number;
}

export interface RateLimitedFigures {
  limitPerSecond: number;
  attempts: number;
  processes: number;
  landingsPerSecond: number;
  /** The landings with no sweep running, and while the sweeps ran. */
  alone: LandingStream;
  withSweep: LandingStream;
  sweepWallMs: number;
  /** Sweep runs, and the pauses between them (ms). */
  runs: number;
  pauseMs: number;
  /** The limit the sweeps' shared pace had learned after each run (null: none learned). */
  learnedLimits: (number | null)[];
  fulfilledByProcess: number[];
  sweepRate: number;
  /** Status reads the landings made a second while the sweeps ran (all reads minus the sweeps'). */
  landingReadsPerSecond: number;
  /** 0.85 x (R minus the landings' reads). */
  targetRate: number;
  /** Every status read of the client while the sweeps ran, and those answered 429. */
  reads: number;
  limited: number;
  limitedShare: number;
  /** Reads the sweeps met a 429 on, per process (each read again after the pause). */
  rateLimitedByProcess: number[];
  grants: number;
  distinctGrants: number;
  /** The landings' grants (each landing that answered 303 fulfilled its attempt), and how many distinct. */
  landingGrants: number;
  landingDistinctGrants: number;
  p99Ratio: number;
}

interface EmulatorStats {
  statusReads: number;
  statusReadsLimited: number;
}

async function control<T>(emulatorUrl: string, method: 'GET' | 'POST', path: string, body?: object): Promise<T> {
  const init =
    method === 'GET'
      ? { method }
      : { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body ?? {}) };
  const response = await fetch(`${emulatorUrl}/_control${path}`, init);
  if (!response.ok) throw new Error(`emulator ${method} ${path} answered ${response.status}`);
  return (await response.json()) as T;
}

/**
 * Open loop: a landing every 1/rate s, each on its own attempt, whatever the previous ones are
 * doing (a user does not wait for another), until `until` resolves or the attempts run out.
 */
async function landingStream(
  side: Side,
  cookie: string,
  attempts: SeedAttempt[],
  perSecond: number,
  until: Promise<unknown>,
): Promise<LandingStream> {
  const pool = loadPool(side.origin, 64);
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const inFlight = new Set<Promise<void>>();
  let done = false;
  void until.finally(() => (done = true));
  const began = performance.now();
  for (let i = 0; !done && attempts.length > 0; i++) {
    const wait = began + (i * 1000) / perSecond - performance.now();
    if (wait > 0) await Promise.race([sleep(wait), until]);
    if (done) break;
    const attempt = attempts.shift()!;
    const t0 = performance.now();
    const one = pool
      .request({ method: 'GET', path: landingPath(attempt), headers: { cookie } })
      .then(async (r) => {
        await r.body.dump({ limit: Number.MAX_SAFE_INTEGER });
        latencies.push(performance.now() - t0);
        statuses[r.statusCode] = (statuses[r.statusCode] ?? 0) + 1;
      })
      .catch(() => void (statuses['0'] = (statuses['0'] ?? 0) + 1))
      .finally(() => inFlight.delete(one));
    inFlight.add(one);
  }
  await Promise.all(inFlight);
  await pool.close();
  const sorted = sortedCopy(latencies);
  return {
    landings: latencies.length,
    statuses,
    p50: round2(percentile(sorted, 50)),
    p99: round2(percentile(sorted, 99)),
  };
}

/** A kit app on the sweeps' database and client: the landings share their store and their rate limit. */
async function landingApp(emulatorUrl: string, client: SeedClient, database: TestDatabase, children: Child[]) {
  const { child, port } = await spawnApp('kit', children);
  await child.call('configure', {
    emulatorUrl,
    clientId: client.clientId,
    secret: client.secret,
    returnUrl: client.returnUrl,
    dbPath: '',
    databaseUrl: database.url,
  });
  const side: Side = { name: 'kit', child, origin: `http://127.0.0.1:${port}`, client };
  return side;
}

/** Seeds the landings' attempts through the app (due in minutes, so the sweeps leave them to the landings). */
async function seedLandings(emulatorUrl: string, side: Side) {
  // Enough landings for the stream alone and for a sweep at half its target rate.
  const expectedSweepSeconds =
    config.rateLimitedSize / (0.5 * Math.max(1, config.rateLimit - config.rateLimitedLandings));
  const landingCount = Math.ceil(
    config.rateLimitedLandings * (config.rateLimitedAloneMs / 1000 + expectedSweepSeconds),
  );
  const landings = await seedSide(emulatorUrl, side, landingCount, () => LANDER);
  return { landings, cookie: (await login(side, LANDER)).cookie };
}

const LANDER = 'bench-rl-lander';

export async function rateLimitedPhase(emulatorUrl: string, client: SeedClient): Promise<RateLimitedFigures> {
  await resetEmulator(emulatorUrl);
  const t0 = performance.now();
  const sweepSessions = await seedVerifiedSessions(
    emulatorUrl,
    client,
    config.rateLimitedSize,
    (i) => `bench-rl-sweeper-${i}`,
    { concurrency: config.seedConcurrency },
  );
  const { database, children } = await kitSweepDatabase(sweepSessions);
  const apps: Child[] = [];
  try {
    const side = await landingApp(emulatorUrl, client, database, apps);
    const { landings, cookie } = await seedLandings(emulatorUrl, side);
    log(
      `rate-limited: seeded ${sweepSessions.length} + ${landings.length} sessions in ${Math.round(performance.now() - t0)} ms`,
    );
    await control(emulatorUrl, 'POST', '/rate-limits', { statusReadsPerSecond: config.rateLimit });
    const alone = await landingStream(
      side,
      cookie,
      landings,
      config.rateLimitedLandings,
      sleep(config.rateLimitedAloneMs),
    );
    log(`rate-limited: ${alone.landings} landings alone, p99 ${alone.p99} ms`);
    await sleep(1200); // the emulator's bucket full again
    const before = await control<EmulatorStats>(emulatorUrl, 'GET', '/stats');
    const w0 = performance.now();
    const args = {
      dbPath: '',
      emulatorUrl,
      clientId: client.clientId,
      secret: client.secret,
      databaseUrl: database.url,
      timeBudgetMs: config.sweepBudgetMs,
      nice: DEFAULT_SWEEP_NICE,
    };
    const sweeps = sweepRuns(children, args, database);
    const withSweep = await landingStream(side, cookie, landings, config.rateLimitedLandings, sweeps);
    const { results, sweepMs, learnedLimits } = await sweeps;
    const after = await control<EmulatorStats>(emulatorUrl, 'GET', '/stats');
    const grants = await grantCounts(database);
    log(`rate-limited: ${learnedLimits.length} run(s), limits learned ${JSON.stringify(learnedLimits)}`);
    const processes = children.length;
    const figures = { alone, withSweep, results, processes, wallMs: performance.now() - w0, sweepMs, before, after };
    return figuresOf({ ...figures, grants, learnedLimits });
  } finally {
    await control(emulatorUrl, 'POST', '/rate-limits', { statusReadsPerSecond: 0 }).catch(() => undefined);
    await Promise.all([...apps, ...children].map((c) => c.stop()));
    await database.drop();
  }
}

type SweepCallArgs = Record<string, unknown> & { timeBudgetMs: number };

/**
 * The sweeps: one run per process until done (one run), or `rateLimitedRuns` runs of
 * `rateLimitedRunMs` with `rateLimitedPauseMs` between them, as a worker on its interval. Each
 * run's reports, the time the runs took (pauses left out) and the limit learned after each.
 */
async function sweepRuns(children: Child[], args: SweepCallArgs, database: TestDatabase) {
  const runs = config.rateLimitedRuns;
  const budget = runs === 1 ? args.timeBudgetMs : config.rateLimitedRunMs;
  const results: SweepChildResult[] = [];
  const learnedLimits: (number | null)[] = [];
  let sweepMs = 0;
  for (let run = 0; run < runs; run++) {
    if (run > 0) await sleep(config.rateLimitedPauseMs);
    const r0 = performance.now();
    const reports = await Promise.all(
      children.map((c) => c.call<SweepChildResult>('sweep', { ...args, timeBudgetMs: budget }, budget + 120_000)),
    );
    sweepMs += performance.now() - r0;
    results.push(...reports);
    learnedLimits.push(await learnedLimit(database));
    if (reports.every((r) => r.report.claimed === 0)) break;
  }
  return { results, sweepMs, learnedLimits };
}

/** The limit the sweep processes' shared pace holds (the kit's pace row). */
async function learnedLimit(database: TestDatabase): Promise<number | null> {
  const { rows } = await database.pool.query<{ limit_per_second: number | null }>(
    'SELECT limit_per_second FROM verify_kit_sweep_pace WHERE id = 1',
  );
  const limit = rows[0]?.limit_per_second ?? null;
  return limit === null ? null : round1(limit);
}

/** The grants of the sweeps' attempts and of the landings', each with how many are distinct. */
async function grantCounts(database: TestDatabase) {
  const { rows } = await database.pool.query<{ lander: boolean; n: number; d: number }>(
    `SELECT user_ref = $1 AS lander, count(*)::int AS n, count(DISTINCT session_id)::int AS d
       FROM bench_grants GROUP BY 1`,
    [LANDER],
  );
  const of = (lander: boolean) => rows.find((r) => r.lander === lander) ?? { n: 0, d: 0 };
  return { sweeps: of(false), landings: of(true) };
}

/** A count summed over the runs, per sweep process. */
function byProcess(m: { results: SweepChildResult[]; processes: number }, count: (r: SweepChildResult) => number) {
  return Array.from({ length: m.processes }, (_, p) =>
    m.results.filter((_, i) => i % m.processes === p).reduce((n, r) => n + count(r), 0),
  );
}

function figuresOf(m: {
  alone: LandingStream;
  withSweep: LandingStream;
  /** Every run's reports, run after run, one per process in the same order. */
  results: SweepChildResult[];
  processes: number;
  wallMs: number;
  /** The runs' own time, pauses left out (the sweep rate is over it). */
  sweepMs: number;
  before: EmulatorStats;
  after: EmulatorStats;
  grants: { sweeps: { n: number; d: number }; landings: { n: number; d: number } };
  learnedLimits: (number | null)[];
}): RateLimitedFigures {
  const seconds = m.sweepMs / 1000;
  const fulfilled = m.results.reduce((n, r) => n + r.report.fulfilled, 0);
  const sweepReads = m.results.reduce((n, r) => n + r.report.reads, 0);
  const reads = m.after.statusReads - m.before.statusReads;
  const limited = m.after.statusReadsLimited - m.before.statusReadsLimited;
  // The landings read through the pauses too.
  const landingReadsPerSecond = Math.max(0, reads - sweepReads) / (m.wallMs / 1000);
  return {
    limitPerSecond: config.rateLimit,
    attempts: config.rateLimitedSize,
    processes: m.processes,
    landingsPerSecond: config.rateLimitedLandings,
    alone: m.alone,
    withSweep: m.withSweep,
    sweepWallMs: Math.round(m.wallMs),
    runs: m.learnedLimits.length,
    pauseMs: m.learnedLimits.length > 1 ? config.rateLimitedPauseMs : 0,
    learnedLimits: m.learnedLimits,
    fulfilledByProcess: byProcess(m, (r) => r.report.fulfilled),
    sweepRate: round1(fulfilled / seconds),
    landingReadsPerSecond: round1(landingReadsPerSecond),
    targetRate: round1(0.85 * (config.rateLimit - landingReadsPerSecond)),
    reads,
    limited,
    limitedShare: round3(reads === 0 ? 0 : limited / reads),
    rateLimitedByProcess: byProcess(m, (r) => r.report.rateLimited),
    grants: m.grants.sweeps.n,
    distinctGrants: m.grants.sweeps.d,
    landingGrants: m.grants.landings.n,
    landingDistinctGrants: m.grants.landings.d,
    p99Ratio: round3(m.withSweep.p99 / m.alone.p99),
  };
}
