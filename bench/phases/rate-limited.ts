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
 *
 * Each round also runs the hand-written floor (bench/children/pg-sweep-floor-child.ts) in the
 * kit's place, then alone again (every other round the floor first): over the same sessions in a
 * database of its own, reading at the rate the kit's sweeps read and at the same CPU priority. It
 * shows what any sweep making those reads and writes costs the landings on this machine, beside
 * what the kit's costs them.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_SWEEP_NICE } from '../../middleware/sweep/sweep-job-args.ts';
import type { FloorResult } from '../children/pg-sweep-floor-child.ts';
import type { SweepChildResult } from '../children/sweep-child.ts';
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
import { log, round1 } from '../measure.ts';
import { createTestDatabase, type TestDatabase } from '../postgres.ts';
import { resetEmulator, seedVerifiedSessions, type SeedClient } from '../seed.ts';
import { landingStream, pooledStreams } from './landing-stream.ts';
import { kitSweepDatabase, seedDueAttempts } from './pg-sweep.ts';
import { figuresOf, type FloorRoundResult, type RateLimitedFigures, type RoundResult } from './rate-limited-figures.ts';
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
 * Seeds `count` landings' attempts through the app, then moves their first sweep read an hour on:
 * the rounds outlast the app's 3 minutes, and the sweeps leave these attempts to the landings.
 */
async function seedLandings(emulatorUrl: string, side: Side, database: TestDatabase, count: number) {
  const landings = await seedSide(emulatorUrl, side, count, () => LANDER);
  await database.pool.query(
    'UPDATE verify_kit_attempts SET next_check_at = next_check_at + 3600000 WHERE user_ref = $1',
    [LANDER],
  );
  await database.pool.query('VACUUM ANALYZE verify_kit_attempts');
  return landings;
}

/**
 * Landings for the warm-up and the first round: its streams alone, and beside the kit's sweep and
 * the floor, each at half the kit's target rate. Later rounds top up from what the round before used.
 */
function firstLandings(): number {
  const sweepSeconds =
    (2 * config.rateLimitedSize) /
    config.rateLimitedRounds /
    (0.5 * Math.max(1, config.rateLimit - config.rateLimitedLandings));
  const aloneSeconds = (config.rateLimitedWarmUpMs + 1.5 * config.rateLimitedAloneMs) / 1000;
  return Math.ceil(config.rateLimitedLandings * (aloneSeconds + sweepSeconds));
}

/** A round may take half as long again as the one before (a loaded machine): it never runs out. */
const ROUND_MARGIN = 1.5;

/** Before a round: landings enough for ROUND_MARGIN times what the round before used. */
async function topUpLandings(
  emulatorUrl: string,
  side: Side,
  database: TestDatabase,
  landings: SeedAttempt[],
  lastUsed: number,
): Promise<void> {
  const missing = Math.ceil(ROUND_MARGIN * lastUsed) - landings.length;
  if (missing <= 0) return;
  landings.push(...(await seedLandings(emulatorUrl, side, database, missing)));
  log(`rate-limited: seeded ${missing} more landings (the round before used ${lastUsed})`);
}

/** The attempts in `rounds` shares of (nearly) equal size, in order. */
function sharesOf<T>(items: T[], rounds: number): T[][] {
  return Array.from({ length: rounds }, (_, r) =>
    items.slice(Math.floor((r * items.length) / rounds), Math.floor(((r + 1) * items.length) / rounds)),
  );
}

const LANDER = 'bench-rl-lander';

/** What each kit sweep process is called with. */
const sweepArgs = (emulatorUrl: string, client: SeedClient, database: TestDatabase): SweepCallArgs => ({
  dbPath: '',
  emulatorUrl,
  clientId: client.clientId,
  secret: client.secret,
  databaseUrl: database.url,
  timeBudgetMs: config.sweepBudgetMs,
  nice: DEFAULT_SWEEP_NICE,
});

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
  const floor = await floorSweepers(children.length).catch(async (error: unknown) => {
    await Promise.all(children.map((c) => c.stop()));
    await database.drop();
    throw error;
  });
  try {
    const side = await landingApp(emulatorUrl, client, database, apps);
    const landings = await seedLandings(emulatorUrl, side, database, firstLandings());
    const { cookie } = await login(side, LANDER);
    log(
      `rate-limited: seeded ${sweepSessions.length} + ${landings.length} sessions in ${Math.round(performance.now() - t0)} ms`,
    );
    await control(emulatorUrl, 'POST', '/rate-limits', { statusReadsPerSecond: config.rateLimit });
    const args = sweepArgs(emulatorUrl, client, database);
    await landingStream(side, cookie, landings, config.rateLimitedLandings, sleep(config.rateLimitedWarmUpMs));
    const rounds: RoundResult[] = [];
    let lastUsed = 0;
    for (const [round, share] of shares.entries()) {
      // The first share was seeded with the database; each later one when its round begins.
      if (round > 0) await seedDueAttempts(database, share);
      await topUpLandings(emulatorUrl, side, database, landings, lastUsed);
      await database.pool.query('VACUUM ANALYZE bench_grants'); // the last round's grants
      await floor.seed(share, { emulatorUrl, clientId: client.clientId, secret: client.secret });
      // The seeding's dirty pages written now, not during whichever window comes next.
      await database.pool.query('CHECKPOINT');
      const floorFirstAt = round % 2 === 1 ? rounds.at(-1)?.floor.readsPerSecond : undefined;
      const before = landings.length;
      const r = await oneRound({ emulatorUrl, side, cookie, landings, children, args, database, floor }, floorFirstAt);
      lastUsed = before - landings.length;
      rounds.push(r);
      log(
        `rate-limited: round ${round + 1} of ${shares.length}: ${share.length} attempts; landings' p99 alone ` +
          `${r.alone.stream.p99} ms, with the sweeps ${r.withSweep.stream.p99} ms; limits learned ${JSON.stringify(r.learnedLimits)}; ` +
          `the floor at ${round1(r.floor.readsPerSecond)} reads/s: alone ${r.floor.alone.stream.p99} ms, beside it ${r.floor.withFloor.stream.p99} ms`,
      );
    }
    return figuresOf(rounds, children.length, await grantCounts(database), await paceWrites(database));
  } finally {
    await control(emulatorUrl, 'POST', '/rate-limits', { statusReadsPerSecond: 0 }).catch(() => undefined);
    await Promise.all([...apps, ...children, ...floor.children].map((c) => c.stop()));
    await database.drop();
    await floor.database.drop();
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
  floor: FloorSweepers;
}

/**
 * One round: the landings alone, beside the kit's sweeps until those have worked through what is
 * due, alone again, beside the floor over the same sessions, and alone again; every other round
 * the floor goes first (at the kit's rate of the round before). Each side's ratio is over the two
 * alone windows around it (half the alone time each), so a machine that drifts during the round
 * weighs on both sides of the ratio alike.
 */
async function oneRound(c: RoundContext, floorFirstAt: number | undefined): Promise<RoundResult> {
  const aloneWindow = () =>
    landingStream(c.side, c.cookie, c.landings, config.rateLimitedLandings, sleep(config.rateLimitedAloneMs / 2));
  const first = await aloneWindow();
  if (floorFirstAt === undefined) {
    const kit = await kitWindow(c);
    const middle = await aloneWindow();
    const floor = await floorWindow(c, kit.readsPerSecond);
    const last = await aloneWindow();
    return { ...kit, alone: pooledStreams([first, middle]), floor: { ...floor, alone: pooledStreams([middle, last]) } };
  }
  const floor = await floorWindow(c, floorFirstAt);
  const middle = await aloneWindow();
  const kit = await kitWindow(c);
  const last = await aloneWindow();
  return { ...kit, alone: pooledStreams([middle, last]), floor: { ...floor, alone: pooledStreams([first, middle]) } };
}

/** The landings beside the kit's sweeps until those have worked through what is due. */
async function kitWindow(c: RoundContext): Promise<Omit<RoundResult, 'alone' | 'floor'> & { readsPerSecond: number }> {
  await sleep(1200); // the emulator's bucket full again
  const before = await control<EmulatorStats>(c.emulatorUrl, 'GET', '/stats');
  const w0 = performance.now();
  const sweeps = sweepRuns(c.children, c.args, c.database);
  const withSweep = await landingStream(c.side, c.cookie, c.landings, config.rateLimitedLandings, sweeps);
  const { results, sweepMs, learnedLimits } = await sweeps;
  const wallMs = performance.now() - w0;
  const after = await control<EmulatorStats>(c.emulatorUrl, 'GET', '/stats');
  const reads = after.statusReads - before.statusReads;
  const limited = after.statusReadsLimited - before.statusReadsLimited;
  // The sweeps' reads a second, their 429s included: the floor's pace.
  const readsPerSecond = results.reduce((n, r) => n + r.report.reads, 0) / (sweepMs / 1000);
  return { withSweep, results, sweepMs, wallMs, learnedLimits, reads, limited, readsPerSecond };
}

/** The landings beside the floor reading the round's sessions at `readsPerSecond`. */
async function floorWindow(c: RoundContext, readsPerSecond: number): Promise<Omit<FloorRoundResult, 'alone'>> {
  await sleep(1200);
  const runs = c.floor.run(readsPerSecond);
  const withFloor = await landingStream(c.side, c.cookie, c.landings, config.rateLimitedLandings, runs);
  return { withFloor, readsPerSecond, results: await runs };
}

interface FloorSweepers {
  database: TestDatabase;
  children: Child[];
  /** Adds the round's sessions to the floor's table and has each process load its share. */
  seed(sessions: SeedAttempt[], common: { emulatorUrl: string; clientId: string; secret: string }): Promise<void>;
  /** One run of every process, `readsPerSecond` between them all. */
  run(readsPerSecond: number): Promise<FloorResult[]>;
}

/** The hand-written floor's database and processes, as many as the kit's sweep processes. */
async function floorSweepers(processes: number): Promise<FloorSweepers> {
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
