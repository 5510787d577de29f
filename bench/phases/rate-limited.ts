/**
 * The sweep and the landings within the service's rate limit: the emulator answers 429 beyond R
 * status reads a second for the kit's client; two sweep processes work through N due attempts on
 * PostgreSQL while a steady stream of landings runs on a kit app on the same database and client
 * (so a landing's 429 slows those sweeps, as it would in production). The sweep processes take the
 * sweep job's CPU priority (nice 10, as `hosted-sms-verify-kit sweep` does). Measured: the
 * sweep's rate against 0.85 x (R minus the landings' reads), the share of reads answered 429, the
 * landings' p99 against their p99 with no sweep running, and every attempt fulfilled once.
 *
 * In rounds (`BENCH_RATE_LIMITED_ROUNDS`), after a warm-up that is not measured: each round the
 * landings run alone, then the sweeps work through the round's share of the attempts while the
 * landings go on, then the landings run alone again; the p99 ratio is judged on the median of the
 * rounds' ratios, as the other ratios are: one round's ratio ranged from 0.674 to 1.456 between
 * bench runs of the same code.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_SWEEP_NICE } from '../../middleware/sweep/sweep-job-args.ts';
import type { SweepChildResult } from '../children/sweep-child.ts';
import type { SeedAttempt } from '../common.ts';
import { config } from '../config.ts';
import type { Child } from '../ipc.ts';
import { log, round1 } from '../measure.ts';
import type { TestDatabase } from '../postgres.ts';
import { resetEmulator, seedVerifiedSessions, type SeedClient } from '../seed.ts';
import { landingStream, pooledStreams } from './landing-stream.ts';
import { kitSweepDatabase, seedDueAttempts } from './pg-sweep.ts';
import { figuresOf, type RateLimitedFigures, type RoundResult } from './rate-limited-figures.ts';
import { login, seedSide, spawnApp, type Side } from './sides.ts';

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
  // Where the slow landings' time went, on each side (landing-times.ts).
  await child.call('recordLandingTimes');
  const side: Side = { name: 'kit', child, origin: `http://127.0.0.1:${port}`, client };
  return side;
}

/**
 * Seeds the landings' attempts through the app, then moves their first sweep read an hour on: the
 * rounds outlast the app's 3 minutes, and the sweeps leave these attempts to the landings.
 */
async function seedLandings(emulatorUrl: string, side: Side, database: TestDatabase) {
  // Enough landings for every round's stream alone and for a sweep at half its target rate.
  const expectedSweepSeconds =
    config.rateLimitedSize / (0.5 * Math.max(1, config.rateLimit - config.rateLimitedLandings));
  const aloneSeconds = (config.rateLimitedWarmUpMs + config.rateLimitedRounds * config.rateLimitedAloneMs) / 1000;
  const landingCount = Math.ceil(config.rateLimitedLandings * (aloneSeconds + expectedSweepSeconds));
  const landings = await seedSide(emulatorUrl, side, landingCount, () => LANDER);
  await database.pool.query(
    'UPDATE verify_kit_attempts SET next_check_at = next_check_at + 3600000 WHERE user_ref = $1',
    [LANDER],
  );
  await database.pool.query('VACUUM ANALYZE verify_kit_attempts');
  return { landings, cookie: (await login(side, LANDER)).cookie };
}

/** The attempts in `rounds` shares of (nearly) equal size, in order. */
function sharesOf<T>(items: T[], rounds: number): T[][] {
  return Array.from({ length: rounds }, (_, r) =>
    items.slice(Math.floor((r * items.length) / rounds), Math.floor(((r + 1) * items.length) / rounds)),
  );
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
  const shares = sharesOf(sweepSessions, config.rateLimitedRounds);
  const { database, children } = await kitSweepDatabase(shares[0]!);
  const apps: Child[] = [];
  try {
    const side = await landingApp(emulatorUrl, client, database, apps);
    const { landings, cookie } = await seedLandings(emulatorUrl, side, database);
    log(
      `rate-limited: seeded ${sweepSessions.length} + ${landings.length} sessions in ${Math.round(performance.now() - t0)} ms`,
    );
    await control(emulatorUrl, 'POST', '/rate-limits', { statusReadsPerSecond: config.rateLimit });
    const args = {
      dbPath: '',
      emulatorUrl,
      clientId: client.clientId,
      secret: client.secret,
      databaseUrl: database.url,
      timeBudgetMs: config.sweepBudgetMs,
      nice: DEFAULT_SWEEP_NICE,
    };
    await landingStream(side, cookie, landings, config.rateLimitedLandings, sleep(config.rateLimitedWarmUpMs));
    const rounds: RoundResult[] = [];
    for (const [round, share] of shares.entries()) {
      // The first share was seeded with the database; each later one when its round begins.
      if (round > 0) await seedDueAttempts(database, share);
      // The seeding's dirty pages written now, not during whichever window comes next.
      await database.pool.query('CHECKPOINT');
      const r = await oneRound({ emulatorUrl, side, cookie, landings, children, args, database });
      rounds.push(r);
      log(
        `rate-limited: round ${round + 1} of ${shares.length}: ${share.length} attempts; landings' p99 alone ` +
          `${r.alone.stream.p99} ms, with the sweeps ${r.withSweep.stream.p99} ms; limits learned ${JSON.stringify(r.learnedLimits)}`,
      );
    }
    return figuresOf(rounds, children.length, await grantCounts(database), await paceWrites(database));
  } finally {
    await control(emulatorUrl, 'POST', '/rate-limits', { statusReadsPerSecond: 0 }).catch(() => undefined);
    await Promise.all([...apps, ...children].map((c) => c.stop()));
    await database.drop();
  }
}

type SweepCallArgs = Record<string, unknown> & { timeBudgetMs: number };

interface RoundContext {
  emulatorUrl: string;
  side: Side;
  cookie: string;
  /** The landings' attempts not used yet (each stream takes from the front). */
  landings: SeedAttempt[];
  children: Child[];
  args: SweepCallArgs;
  database: TestDatabase;
}

/**
 * One round: the landings alone, beside the sweeps until those have worked through what is due, and
 * alone again. The two alone windows (half the alone time each) are pooled, so a machine that
 * drifts during the round weighs on both sides of the ratio alike.
 */
async function oneRound(c: RoundContext): Promise<RoundResult> {
  const perSecond = config.rateLimitedLandings;
  const aloneWindow = () =>
    landingStream(c.side, c.cookie, c.landings, perSecond, sleep(config.rateLimitedAloneMs / 2));
  const aloneBefore = await aloneWindow();
  await sleep(1200); // the emulator's bucket full again
  const before = await control<EmulatorStats>(c.emulatorUrl, 'GET', '/stats');
  const w0 = performance.now();
  const sweeps = sweepRuns(c.children, c.args, c.database);
  const withSweep = await landingStream(c.side, c.cookie, c.landings, perSecond, sweeps);
  const { results, sweepMs, learnedLimits } = await sweeps;
  const wallMs = performance.now() - w0;
  const after = await control<EmulatorStats>(c.emulatorUrl, 'GET', '/stats');
  const reads = after.statusReads - before.statusReads;
  const limited = after.statusReadsLimited - before.statusReadsLimited;
  const aloneAfter = await aloneWindow();
  const alone = pooledStreams([aloneBefore, aloneAfter]);
  return { alone, withSweep, results, sweepMs, wallMs, learnedLimits, reads, limited };
}

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

/** How often the sweeps' shared pace row was written (each write is a transaction of its own). */
async function paceWrites(database: TestDatabase): Promise<number> {
  const { rows } = await database.pool.query<{ n: string }>(
    "SELECT n_tup_upd AS n FROM pg_stat_user_tables WHERE relname = 'verify_kit_sweep_pace'",
  );
  return Number(rows[0]?.n ?? 0);
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
