/**
 * `npm run bench`: what the kit costs over a hand-written integration, and how the sweep scales
 * (against its targets). Loopback only, against the emulator with no artificial latency. Prints a table and
 * writes the same figures to bench/results/latest.json. See docs/performance.md.
 *
 * Processes: this orchestrator (load generator), the emulator, the kit app and the baseline app
 * each run in their own process; each sweep and each raw-capacity measurement runs in a fresh one.
 * Kit and baseline are measured in alternating short rounds (ABBA order) and their samples pooled,
 * so drift on a shared machine hits both alike; the figures that matter are the ratios.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createPostgresStore } from '../middleware/store/postgres/postgres.ts';
import { createTestDatabase, type TestDatabase } from '../test/support/postgres.ts';
import {
  ACTION,
  PG_BASELINE_ATTEMPTS_TABLE,
  PG_BASELINE_SEED_ATTEMPTS,
  PG_GRANTS_TABLE,
  PG_SEED_ATTEMPTS,
  seedPostgres,
  SUCCESS_PATH,
  type SeedAttempt,
} from './common.ts';
import type { FloorResult } from './pg-sweep-floor-child.ts';
import { spawnChild, type Child } from './ipc.ts';
import {
  closedLoop,
  loadPool,
  median,
  mergeStatuses,
  percentile,
  sortedCopy,
  type LoadRequest,
  type LoadResult,
} from './load.ts';
import { resetEmulator, seedVerifiedSessions, writeDueAttempts, type SeedClient } from './seed.ts';
import type { RawResult, SweepChildResult } from './sweep-child.ts';

// ---------------------------------------------------------------- configuration

function intEnv(name: string, fallback: number, min = 1): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min)
    throw new Error(`${name} must be an integer >= ${min}; got ${JSON.stringify(raw)}`);
  return value;
}

function listEnv(name: string, fallback: number[]): number[] {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const values = raw.split(',').map((s) => Number(s.trim()));
  if (values.length === 0 || values.some((v) => !Number.isInteger(v) || v < 1)) {
    throw new Error(
      `${name} must be a comma-separated list of positive integers, e.g. 10000,100000; got ${JSON.stringify(raw)}`,
    );
  }
  return values.sort((a, b) => a - b);
}

function floorGrantsEnv(): 'batched' | 'each' {
  const raw = process.env.BENCH_PG_FLOOR_GRANTS ?? 'batched';
  if (raw === 'batched' || raw === 'each') return raw;
  throw new Error(`BENCH_PG_FLOOR_GRANTS must be batched or each; got ${JSON.stringify(raw)}`);
}

const PHASES = ['landing', 'start', 'duplicates', 'sweep', 'pg-landing', 'pg-sweep'] as const;
type Phase = (typeof PHASES)[number];

const config = {
  /** Closed-loop workers (= connections) for landing and start. */
  concurrency: intEnv('BENCH_CONCURRENCY', 8),
  /** Measured rounds per side (kit and baseline alternate, ABBA). */
  rounds: intEnv('BENCH_ROUNDS', 10),
  roundRequests: intEnv('BENCH_ROUND_REQUESTS', 600),
  warmupRequests: intEnv('BENCH_WARMUP_REQUESTS', 400, 0),
  /** Time bound of one round (the count bound normally ends it first). */
  roundMaxMs: intEnv('BENCH_ROUND_MAX_MS', 30_000),
  duplicates: intEnv('BENCH_DUPLICATES', 200),
  sweepSizes: listEnv('BENCH_SWEEP_SIZES', [10_000, 100_000]),
  /** Sweep concurrency; unset = the kit's default (4). Raw capacity is measured at the same value. */
  sweepConcurrency: process.env.BENCH_SWEEP_CONCURRENCY ? intEnv('BENCH_SWEEP_CONCURRENCY', 4) : undefined,
  /** The kit's default sweep concurrency (middleware/sweep/sweep-options.ts), used when BENCH_SWEEP_CONCURRENCY is unset. */
  kitDefaultSweepConcurrency: 4,
  sweepBudgetMs: intEnv('BENCH_SWEEP_BUDGET_MS', 300_000),
  /** Due attempts of the PostgreSQL sweep, shared by `pgSweepProcesses` sweep processes. */
  pgSweepSize: intEnv('BENCH_PG_SWEEP_SIZE', 100_000),
  pgSweepProcesses: intEnv('BENCH_PG_SWEEP_PROCESSES', 2),
  /** The floor's grants: in its marking statement, or 'each' in a statement of its own (the kit's action contract). */
  pgFloorGrants: floorGrantsEnv(),
  rawRequests: intEnv('BENCH_RAW_REQUESTS', 15_000),
  rawMaxMs: intEnv('BENCH_RAW_MAX_MS', 10_000),
  seedConcurrency: intEnv('BENCH_SEED_CONCURRENCY', 16),
  phases: (process.env.BENCH_ONLY ?? PHASES.join(','))
    .split(',')
    .map((s) => s.trim())
    .filter((s): s is Phase => (PHASES as readonly string[]).includes(s)),
};
const sweepConcurrency = config.sweepConcurrency ?? config.kitDefaultSweepConcurrency;

// ---------------------------------------------------------------- helpers

const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
const round1 = (n: number) => Math.round(n * 10) / 10;
const round2 = (n: number) => Math.round(n * 100) / 100;
const round3 = (n: number) => Math.round(n * 1000) / 1000;

type Cpu = { user: number; system: number };
const cpuMs = (a: Cpu, b: Cpu) => (b.user - a.user + (b.system - a.system)) / 1000;

interface Side {
  name: 'kit' | 'baseline';
  child: Child;
  origin: string;
  client: SeedClient;
}

async function login(side: Side, user: string): Promise<{ cookie: string; csrf: string }> {
  const response = await fetch(`${side.origin}/bench/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `user=${encodeURIComponent(user)}`,
    redirect: 'manual',
  });
  const setCookie = response.headers.get('set-cookie');
  const body = (await response.json()) as { csrf?: string };
  if (!response.ok || setCookie === null || typeof body.csrf !== 'string')
    throw new Error(`${side.name}: login failed (${response.status})`);
  return { cookie: setCookie.split(';', 1)[0]!, csrf: body.csrf };
}

async function seedSide(
  emulatorUrl: string,
  side: Side,
  count: number,
  userRef: (i: number) => string,
): Promise<SeedAttempt[]> {
  const attempts = await seedVerifiedSessions(emulatorUrl, side.client, count, userRef, {
    concurrency: config.seedConcurrency,
  });
  for (let i = 0; i < attempts.length; i += 5000)
    await side.child.call('seed', { attempts: attempts.slice(i, i + 5000) });
  return attempts;
}

interface SideFigures {
  requests: number;
  ok: number;
  errors: number;
  statuses: Record<string, number>;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** CPU time of the app process per request, ms (user + system). */
  appCpuMsPerRequest: number;
  /** CPU time of the emulator process per request, ms. */
  emulatorCpuMsPerRequest: number;
}

interface Comparison {
  what: string;
  concurrency: number;
  rounds: number;
  roundRequests: number;
  kit: SideFigures;
  baseline: SideFigures;
  ratio: { p50: number; p99: number; rps: number; appCpu: number };
  /** kit/baseline p50 and p99 ratios of each ABBA round pair (their spread shows the noise). */
  perRound: { p50: number[]; p99: number[] };
  /** min, median and max of the per-round ratios: a target is met only when the median meets it. */
  spread: { p50: Spread; p99: Spread };
}

interface Spread {
  min: number;
  median: number;
  max: number;
}

function spreadOf(values: number[]): Spread {
  const sorted = sortedCopy(values);
  return { min: sorted[0] ?? Number.NaN, median: round3(median(values)), max: sorted.at(-1) ?? Number.NaN };
}

const showSpread = (s: Spread) => `median ${s.median.toFixed(3)} (min ${s.min.toFixed(3)}, max ${s.max.toFixed(3)})`;

function figures(runs: LoadResult[], appCpuMs: number, emuCpuMs: number): SideFigures {
  const latencies = sortedCopy(runs.flatMap((r) => r.latenciesMs));
  const ok = runs.reduce((n, r) => n + r.ok, 0);
  const errors = runs.reduce((n, r) => n + r.errors, 0);
  const elapsed = runs.reduce((n, r) => n + r.elapsedMs, 0);
  const requests = ok + errors;
  return {
    requests,
    ok,
    errors,
    statuses: mergeStatuses(runs),
    rps: round1(requests / (elapsed / 1000)),
    p50: round2(percentile(latencies, 50)),
    p90: round2(percentile(latencies, 90)),
    p99: round2(percentile(latencies, 99)),
    max: round2(latencies.at(-1) ?? Number.NaN),
    appCpuMsPerRequest: round3(appCpuMs / requests),
    emulatorCpuMsPerRequest: round3(emuCpuMs / requests),
  };
}

/**
 * Warm-up (discarded), then `rounds` rounds per side in ABBA order: kit, baseline, baseline, kit, ...
 * `request(side, i)` builds the i-th request of that side (i counts across rounds, warm-up first).
 */
async function interleaved(
  what: string,
  sides: [Side, Side],
  emulator: Child,
  expectStatus: number,
  request: (side: Side, index: number, worker: number) => LoadRequest,
): Promise<Comparison> {
  const pools = new Map(sides.map((s) => [s.name, loadPool(s.origin, config.concurrency)]));
  const next = new Map(sides.map((s) => [s.name, 0]));
  const runs = new Map<string, LoadResult[]>(sides.map((s) => [s.name, []]));
  const appCpu = new Map(sides.map((s) => [s.name, 0]));
  const emuCpu = new Map(sides.map((s) => [s.name, 0]));

  const runOne = async (side: Side, count: number, keep: boolean) => {
    const base = next.get(side.name)!;
    next.set(side.name, base + count);
    const [app0, emu0] = await Promise.all([side.child.call<Cpu>('cpu'), emulator.call<Cpu>('cpu')]);
    const result = await closedLoop({
      pool: pools.get(side.name)!,
      concurrency: config.concurrency,
      total: count,
      maxMs: config.roundMaxMs,
      expectStatus,
      request: (i, worker) => request(side, base + i, worker),
    });
    const [app1, emu1] = await Promise.all([side.child.call<Cpu>('cpu'), emulator.call<Cpu>('cpu')]);
    if (result.timedOut)
      log(
        `${what}: a ${side.name} round hit its ${config.roundMaxMs} ms bound after ${result.ok + result.errors} requests`,
      );
    if (!keep) return;
    runs.get(side.name)!.push(result);
    appCpu.set(side.name, appCpu.get(side.name)! + cpuMs(app0, app1));
    emuCpu.set(side.name, emuCpu.get(side.name)! + cpuMs(emu0, emu1));
  };

  try {
    if (config.warmupRequests > 0) for (const side of sides) await runOne(side, config.warmupRequests, false);
    for (let r = 0; r < config.rounds; r++) {
      const order = r % 2 === 0 ? sides : ([sides[1], sides[0]] as const);
      for (const side of order) await runOne(side, config.roundRequests, true);
      log(`${what}: round ${r + 1}/${config.rounds} done`);
    }
  } finally {
    await Promise.all([...pools.values()].map((p) => p.close()));
  }
  const [kitSide, baseSide] = sides;
  const kit = figures(runs.get(kitSide.name)!, appCpu.get(kitSide.name)!, emuCpu.get(kitSide.name)!);
  const baseline = figures(runs.get(baseSide.name)!, appCpu.get(baseSide.name)!, emuCpu.get(baseSide.name)!);
  const kitRuns = runs.get(kitSide.name)!;
  const baseRuns = runs.get(baseSide.name)!;
  const perRound = { p50: [] as number[], p99: [] as number[] };
  kitRuns.forEach((k, i) => {
    const b = baseRuns[i]!;
    const ks = sortedCopy(k.latenciesMs);
    const bs = sortedCopy(b.latenciesMs);
    perRound.p50.push(round3(percentile(ks, 50) / percentile(bs, 50)));
    perRound.p99.push(round3(percentile(ks, 99) / percentile(bs, 99)));
  });
  return {
    what,
    concurrency: config.concurrency,
    rounds: config.rounds,
    roundRequests: config.roundRequests,
    kit,
    baseline,
    ratio: {
      p50: round3(kit.p50 / baseline.p50),
      p99: round3(kit.p99 / baseline.p99),
      rps: round3(kit.rps / baseline.rps),
      appCpu: round3(kit.appCpuMsPerRequest / baseline.appCpuMsPerRequest),
    },
    perRound,
    spread: { p50: spreadOf(perRound.p50), p99: spreadOf(perRound.p99) },
  };
}

function landingPath(a: SeedAttempt): string {
  return `/verify/return?session_id=${encodeURIComponent(a.sessionId)}&state=${encodeURIComponent(a.state)}`;
}

// ---------------------------------------------------------------- phases

async function landingPhase(
  emulatorUrl: string,
  emulator: Child,
  sides: [Side, Side],
  what = 'landing',
): Promise<Comparison> {
  await resetEmulator(emulatorUrl);
  const perSide = config.warmupRequests + config.rounds * config.roundRequests + 1;
  const lander = 'bench-lander';
  const seeded = new Map<string, SeedAttempt[]>();
  const cookies = new Map<string, string>();
  for (const side of sides) {
    const t0 = performance.now();
    seeded.set(side.name, await seedSide(emulatorUrl, side, perSide, () => lander));
    log(
      `landing: seeded ${perSide} verified sessions + attempts for ${side.name} in ${Math.round(performance.now() - t0)} ms`,
    );
    cookies.set(side.name, (await login(side, lander)).cookie);
  }
  // Sanity: one landing each answers 303 to the stored path (the last seeded attempt, not used below).
  for (const side of sides) {
    const attempt = seeded.get(side.name)!.at(-1)!;
    const response = await fetch(`${side.origin}${landingPath(attempt)}`, {
      headers: { cookie: cookies.get(side.name)! },
      redirect: 'manual',
    });
    await response.arrayBuffer();
    if (response.status !== 303 || response.headers.get('location') !== SUCCESS_PATH) {
      throw new Error(
        `landing sanity check failed for ${side.name}: ${response.status} ${response.headers.get('location')}`,
      );
    }
  }
  const before = new Map<string, { grants: number }>();
  for (const side of sides) before.set(side.name, await side.child.call('counts'));
  const result = await interleaved(what, sides, emulator, 303, (side, i) => ({
    method: 'GET',
    path: landingPath(seeded.get(side.name)![i]!),
    headers: { cookie: cookies.get(side.name)! },
  }));
  // Every measured landing fulfilled its own attempt exactly once.
  for (const side of sides) {
    const after = await side.child.call<{ grants: number }>('counts');
    const grants = after.grants - before.get(side.name)!.grants;
    const expected = config.warmupRequests + (side.name === 'kit' ? result.kit.ok : result.baseline.ok);
    if (grants !== expected)
      log(`landing: WARNING ${side.name} made ${grants} grants for ${expected} successful landings`);
  }
  return result;
}

async function startPhase(emulatorUrl: string, emulator: Child, sides: [Side, Side]): Promise<Comparison> {
  await resetEmulator(emulatorUrl);
  // One signed-in user (own cookie jar, own CSRF token, own destination) per worker and side.
  const jars = new Map<string, { cookie: string; csrf: string }[]>();
  for (const side of sides) {
    const list = [];
    for (let w = 0; w < config.concurrency; w++) list.push(await login(side, `bench-starter-${side.name}-${w}`));
    jars.set(side.name, list);
  }
  const startRequest = (side: Side, worker: number): LoadRequest => {
    const jar = jars.get(side.name)![worker]!;
    return {
      method: 'POST',
      path: '/verify/start',
      headers: { cookie: jar.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: `action=${ACTION}&_csrf=${encodeURIComponent(jar.csrf)}`,
    };
  };
  // Sanity: each side answers a page that posts a handoff to the emulator's verifyUrl.
  for (const side of sides) {
    const req = startRequest(side, 0);
    const response = await fetch(`${side.origin}${req.path}`, {
      method: 'POST',
      headers: req.headers,
      body: req.body ?? null,
      redirect: 'manual',
    });
    const text = await response.text();
    if (response.status !== 200 || !text.includes(`${emulatorUrl}/verify`) || !text.includes('name="hx"')) {
      throw new Error(`start sanity check failed for ${side.name}: ${response.status}`);
    }
  }
  return interleaved('start', sides, emulator, 200, (side, _i, worker) => startRequest(side, worker));
}

interface DuplicateFigures {
  side: string;
  requests: number;
  statuses: Record<string, number>;
  fulfilments: number;
  p50: number;
  p99: number;
  max: number;
}

async function duplicatesPhase(emulatorUrl: string, sides: [Side, Side]): Promise<DuplicateFigures[]> {
  await resetEmulator(emulatorUrl);
  const out: DuplicateFigures[] = [];
  for (const side of sides) {
    const [attempt] = await seedSide(emulatorUrl, side, 1, () => 'bench-lander');
    const { cookie } = await login(side, 'bench-lander');
    const before = await side.child.call<{ grants: number }>('counts');
    const pool = loadPool(side.origin, config.duplicates);
    try {
      const result = await closedLoop({
        pool,
        concurrency: config.duplicates,
        total: config.duplicates,
        maxMs: 60_000,
        expectStatus: 303,
        request: () => ({ method: 'GET', path: landingPath(attempt!), headers: { cookie } }),
      });
      const after = await side.child.call<{ grants: number }>('counts');
      const sorted = sortedCopy(result.latenciesMs);
      out.push({
        side: side.name,
        requests: result.ok + result.errors,
        statuses: result.statuses,
        fulfilments: after.grants - before.grants,
        p50: round2(percentile(sorted, 50)),
        p99: round2(percentile(sorted, 99)),
        max: round2(sorted.at(-1) ?? Number.NaN),
      });
    } finally {
      await pool.close();
    }
  }
  return out;
}

interface SweepFigures {
  attempts: number;
  seedMs: number;
  /** Fork + runSweep + exit of the sweeping process, ms (tsx start-up included). */
  processWallMs: number;
  /** runSweep alone, ms. */
  runMs: number;
  attemptsPerSecond: number;
  /** Raw GET /session capacity (req/s) measured just before and just after, and their mean. */
  rawBefore: number;
  rawAfter: number;
  rawCapacity: number;
  fractionOfRaw: number;
  peakRssMiB: number;
  rssBeforeRunMiB: number;
  sweepCpuMsPerAttempt: number;
  emulatorCpuMsPerRead: number;
  emulatorCpuMsPerRawRead: number;
  /** CPU of the raw client process per read, ms (compare with sweepCpuMsPerAttempt). */
  rawClientCpuMsPerRead: number;
  report: SweepChildResult['report'];
  grants: number;
}

async function sweepPhase(
  emulatorUrl: string,
  emulator: Child,
  client: SeedClient,
  dir: string,
): Promise<SweepFigures[]> {
  const out: SweepFigures[] = [];
  for (const size of config.sweepSizes) {
    await resetEmulator(emulatorUrl);
    const dbPath = join(dir, `sweep-${size}.sqlite`);
    const t0 = performance.now();
    // One attempt per user: with the default ordering every one of them is the user's newest intent.
    const sessions = await seedVerifiedSessions(emulatorUrl, client, size, (i) => `bench-sweeper-${i}`, {
      concurrency: config.seedConcurrency,
    });
    // The attempts, through the kit's store, all due (first check time in the past), in one transaction.
    await writeDueAttempts(dbPath, sessions);
    const seedMs = performance.now() - t0;
    log(`sweep ${size}: seeded ${size} verified sessions and due attempts in ${Math.round(seedMs)} ms`);

    const common = { dbPath, emulatorUrl, clientId: client.clientId, secret: client.secret };
    const raw = async (): Promise<RawResult & { emuCpuMs: number }> => {
      const child = spawnChild('./sweep-child.ts', 'raw');
      try {
        const e0 = await emulator.call<Cpu>('cpu');
        const result = await child.call<RawResult>('raw', {
          ...common,
          concurrency: sweepConcurrency,
          total: config.rawRequests,
          maxMs: config.rawMaxMs,
        });
        const e1 = await emulator.call<Cpu>('cpu');
        if (result.errors > 0) log(`sweep ${size}: WARNING raw capacity run had ${result.errors} errors`);
        return { ...result, emuCpuMs: cpuMs(e0, e1) };
      } finally {
        await child.stop();
      }
    };

    const before = await raw();
    log(`sweep ${size}: raw capacity before ${Math.round(before.rps)} req/s`);
    const child = spawnChild('./sweep-child.ts', 'sweep');
    let result: SweepChildResult;
    const w0 = performance.now();
    const e0 = await emulator.call<Cpu>('cpu');
    try {
      result = await child.call<SweepChildResult>(
        'sweep',
        {
          ...common,
          concurrency: config.sweepConcurrency,
          timeBudgetMs: config.sweepBudgetMs,
        },
        config.sweepBudgetMs + 120_000,
      );
    } finally {
      await child.stop();
    }
    const e1 = await emulator.call<Cpu>('cpu');
    const processWallMs = performance.now() - w0;
    log(`sweep ${size}: ${result.report.fulfilled} fulfilled in ${Math.round(result.runMs)} ms`);
    if (result.memoryAtPeak !== undefined)
      log(`sweep ${size}: memory at the peak ${JSON.stringify(result.memoryAtPeak)}`);
    const after = await raw();
    log(`sweep ${size}: raw capacity after ${Math.round(after.rps)} req/s`);
    if (result.report.stoppedBy !== null)
      log(`sweep ${size}: WARNING the sweep stopped by ${result.report.stoppedBy} before the due work was done`);

    const attemptsPerSecond = result.report.fulfilled / (result.runMs / 1000);
    const rawCapacity = (before.rps + after.rps) / 2;
    out.push({
      attempts: size,
      seedMs: Math.round(seedMs),
      processWallMs: Math.round(processWallMs),
      runMs: Math.round(result.runMs),
      attemptsPerSecond: round1(attemptsPerSecond),
      rawBefore: round1(before.rps),
      rawAfter: round1(after.rps),
      rawCapacity: round1(rawCapacity),
      fractionOfRaw: round3(attemptsPerSecond / rawCapacity),
      peakRssMiB: round1(result.peakRssKiB / 1024),
      rssBeforeRunMiB: round1(result.rssBeforeKiB / 1024),
      sweepCpuMsPerAttempt: round3((result.cpuUserMs + result.cpuSystemMs) / Math.max(1, result.report.reads)),
      emulatorCpuMsPerRead: round3(cpuMs(e0, e1) / Math.max(1, result.report.reads)),
      rawClientCpuMsPerRead: round3((before.cpuMsPerRequest + after.cpuMsPerRequest) / 2),
      emulatorCpuMsPerRawRead: round3(
        (before.emuCpuMs + after.emuCpuMs) / Math.max(1, before.ok + before.errors + after.ok + after.errors),
      ),
      report: result.report,
      grants: result.grants,
    });
    rmSync(dbPath, { force: true });
    rmSync(`${dbPath}-wal`, { force: true });
    rmSync(`${dbPath}-shm`, { force: true });
  }
  return out;
}

/** Throughput and CPU per fulfilled attempt of one multi-process sweep on PostgreSQL. */
interface PgSweepRun {
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

interface PgSweepFigures extends PgSweepRun {
  attempts: number;
  processes: number;
  seedMs: number;
  /** Raw GET /session capacity at the processes' combined concurrency, before and after. */
  rawConcurrency: number;
  rawBefore: number;
  rawAfter: number;
  rawCapacity: number;
  /**
   * The same attempts swept by hand with the least work per attempt (bench/pg-sweep-floor-child.ts):
   * a read and one statement, no claim. What this machine allows any sweep on PostgreSQL.
   */
  floor: PgSweepRun;
  /** The kit's rate over the floor's. */
  kitOverFloor: number;
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

/** The kit's sweep processes over the kit's store, seeded with `sessions` as due attempts. */
async function kitPgSweep(sessions: SeedAttempt[], common: object, emulator: Child) {
  const database: TestDatabase = await createTestDatabase({ max: 4 });
  try {
    const store = createPostgresStore({ pool: database.pool });
    await store.ready;
    await database.pool.query(PG_GRANTS_TABLE);
    const now = Date.now();
    await seedPostgres(database.pool, PG_SEED_ATTEMPTS, sessions, [ACTION, SUCCESS_PATH, now - 600_000, now - 60_000]);
    await database.pool.query('VACUUM ANALYZE verify_kit_attempts');
    const children = Array.from({ length: config.pgSweepProcesses }, () => spawnChild('./sweep-child.ts', 'sweep'));
    try {
      // Timed only once every process answers (a tsx start-up is not sweep time): any reply will do.
      await Promise.all(children.map((c) => c.call('ping').catch(() => undefined)));
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
    }
  } finally {
    await database.drop();
  }
}

/** The hand-written floor (bench/pg-sweep-floor-child.ts) over its own table, seeded with `sessions`. */
async function floorPgSweep(sessions: SeedAttempt[], common: object, emulator: Child) {
  const database: TestDatabase = await createTestDatabase({ max: 2 });
  try {
    await database.pool.query(`${PG_BASELINE_ATTEMPTS_TABLE}; ${PG_GRANTS_TABLE}`);
    await seedPostgres(database.pool, PG_BASELINE_SEED_ATTEMPTS, sessions, [ACTION, SUCCESS_PATH, Date.now()]);
    await database.pool.query('VACUUM ANALYZE attempts');
    const shares = config.pgSweepProcesses;
    const children = Array.from({ length: shares }, () => spawnChild('./pg-sweep-floor-child.ts', 'floor'));
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
async function pgSweepPhase(emulatorUrl: string, emulator: Child, client: SeedClient): Promise<PgSweepFigures> {
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
  const raw = async (): Promise<RawResult> => {
    const child = spawnChild('./sweep-child.ts', 'raw');
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
  };
  const before = await raw();
  log(`pg-sweep ${size}: raw capacity before ${Math.round(before.rps)} req/s at concurrency ${rawConcurrency}`);
  const kit = await kitPgSweep(sessions, common, emulator);
  log(`pg-sweep ${size}: kit ${kit.fulfilledByProcess.join(' + ')} fulfilled in ${kit.wallMs} ms`);
  const floor = await floorPgSweep(sessions, common, emulator);
  log(`pg-sweep ${size}: floor ${floor.fulfilledByProcess.join(' + ')} fulfilled in ${floor.wallMs} ms`);
  const after = await raw();
  log(`pg-sweep ${size}: raw capacity after ${Math.round(after.rps)} req/s`);
  const rawCapacity = (before.rps + after.rps) / 2;
  const withFraction = (r: Omit<PgSweepRun, 'fractionOfRaw'>): PgSweepRun => ({
    ...r,
    fractionOfRaw: round3(r.attemptsPerSecond / rawCapacity),
  });
  return {
    ...withFraction(kit),
    attempts: size,
    processes: config.pgSweepProcesses,
    seedMs: Math.round(seedMs),
    rawConcurrency,
    rawBefore: round1(before.rps),
    rawAfter: round1(after.rps),
    rawCapacity: round1(rawCapacity),
    floor: withFraction(floor),
    kitOverFloor: round3(kit.attemptsPerSecond / floor.attemptsPerSecond),
  };
}

// ---------------------------------------------------------------- targets and output

interface Target {
  name: string;
  target: string;
  value: string;
  met: boolean;
}

function targetsOf(
  landing?: Comparison,
  start?: Comparison,
  dups?: DuplicateFigures[],
  sweep?: SweepFigures[],
  pgLanding?: Comparison,
  pgSweep?: PgSweepFigures,
): Target[] {
  const t: Target[] = [];
  if (pgSweep !== undefined) {
    const once = pgSweep.grants === pgSweep.attempts && pgSweep.distinctGrants === pgSweep.attempts;
    const p = pgSweep;
    t.push({
      name: `pg-sweep ${p.attempts} (${p.processes} processes): every attempt fulfilled once`,
      target: `= ${p.attempts}`,
      value: `${p.fulfilledByProcess.join(' + ')} (grants ${p.grants}, distinct ${p.distinctGrants})`,
      met: once,
    });
    t.push({
      name: `pg-sweep ${p.attempts}: rate / raw capacity (c=${p.rawConcurrency})`,
      target: '>= 0.80',
      value: `${p.fractionOfRaw.toFixed(3)} (the hand-written floor: ${p.floor.fractionOfRaw.toFixed(3)})`,
      met: p.fractionOfRaw >= 0.8,
    });
  }
  for (const c of [landing, start, pgLanding]) {
    if (c === undefined) continue;
    // A ratio over wrong answers (e.g. 429s) means nothing: it counts as met only when every request succeeded.
    const errors = c.kit.errors + c.baseline.errors;
    const note = errors === 0 ? '' : ' (not comparable: some requests failed)';
    // The median of the per-round ratios decides: one noisy round on a shared machine cannot.
    for (const q of ['p50', 'p99'] as const) {
      const s = c.spread[q];
      t.push({
        name: `${c.what}: kit/baseline ${q}, median of ${c.rounds} ABBA rounds`,
        target: '<= 1.10',
        value: `${showSpread(s)}; pooled ${c.ratio[q].toFixed(3)}${note}`,
        met: errors === 0 && s.median <= 1.1,
      });
    }
    t.push({
      name: `${c.what}: every request answered as expected`,
      target: '0 errors',
      value: String(errors),
      met: errors === 0,
    });
  }
  for (const d of dups ?? []) {
    t.push({
      name: `duplicates (${d.side}): fulfilments for ${d.requests} concurrent landings`,
      target: '= 1',
      value: String(d.fulfilments),
      met: d.fulfilments === 1,
    });
  }
  if (sweep !== undefined && sweep.length > 0) {
    for (const s of sweep) {
      const complete = s.report.fulfilled === s.attempts && s.grants === s.attempts;
      t.push({
        name: `sweep ${s.attempts}: every attempt fulfilled once`,
        target: `= ${s.attempts}`,
        value: `${s.report.fulfilled} (grants ${s.grants})`,
        met: complete,
      });
      t.push({
        name: `sweep ${s.attempts}: rate / raw capacity (c=${sweepConcurrency})`,
        target: '>= 0.80',
        value: s.fractionOfRaw.toFixed(3),
        met: s.fractionOfRaw >= 0.8,
      });
    }
    if (sweep.length >= 2) {
      const small = sweep[0]!;
      const large = sweep.at(-1)!;
      // Linear time: time per attempt at the large size within 1.2x of the small size's.
      const perAttempt = large.runMs / large.attempts / (small.runMs / small.attempts);
      t.push({
        name: `sweep ${small.attempts} -> ${large.attempts}: time per attempt (linear)`,
        target: '<= 1.20x',
        value: `${perAttempt.toFixed(3)}x`,
        met: perAttempt <= 1.2,
      });
      const rss = large.peakRssMiB / small.peakRssMiB;
      t.push({
        name: `sweep ${small.attempts} -> ${large.attempts}: peak RSS`,
        target: '<= 1.20x',
        value: `${rss.toFixed(3)}x`,
        met: rss <= 1.2,
      });
    }
  }
  return t;
}

function pad(cells: (string | number)[], widths: number[]): string {
  return cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]!) : String(c).padStart(widths[i]!))).join('  ');
}

function comparisonTable(c: Comparison, title: string): string {
  const w = [10, 9, 8, 8, 8, 12, 12];
  const row = (name: string, f: SideFigures) =>
    pad(
      [
        name,
        f.rps.toFixed(1),
        f.p50.toFixed(2),
        f.p90.toFixed(2),
        f.p99.toFixed(2),
        f.appCpuMsPerRequest.toFixed(3),
        f.emulatorCpuMsPerRequest.toFixed(3),
      ],
      w,
    );
  return [
    title,
    pad(['', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'app CPU ms', 'emu CPU ms'], w),
    row('kit', c.kit),
    row('baseline', c.baseline),
    pad(
      [
        'kit/base',
        c.ratio.rps.toFixed(3),
        c.ratio.p50.toFixed(3),
        '',
        c.ratio.p99.toFixed(3),
        c.ratio.appCpu.toFixed(3),
        '',
      ],
      w,
    ),
    `  per ABBA round kit/base p50: ${c.perRound.p50.join(' ')}: ${showSpread(c.spread.p50)}`,
    `  per ABBA round kit/base p99: ${c.perRound.p99.join(' ')}: ${showSpread(c.spread.p99)}`,
    `  statuses kit ${JSON.stringify(c.kit.statuses)} baseline ${JSON.stringify(c.baseline.statuses)}`,
  ].join('\n');
}

function sweepTable(rows: SweepFigures[]): string {
  const w = [9, 9, 9, 10, 11, 11, 9, 10, 11, 11];
  return [
    `Sweep: one runSweep over N due attempts (verified sessions) in a fresh child process; concurrency ${sweepConcurrency}${config.sweepConcurrency === undefined ? ' (kit default)' : ''}, batch 50 (default)`,
    pad(
      [
        'attempts',
        'seed s',
        'run s',
        'process s',
        'attempts/s',
        'raw req/s',
        'fraction',
        'peak RSS',
        'CPU ms/att',
        'emu ms/read',
      ],
      w,
    ),
    ...rows.map((s) =>
      pad(
        [
          s.attempts,
          (s.seedMs / 1000).toFixed(1),
          (s.runMs / 1000).toFixed(2),
          (s.processWallMs / 1000).toFixed(2),
          s.attemptsPerSecond.toFixed(1),
          s.rawCapacity.toFixed(1),
          s.fractionOfRaw.toFixed(3),
          `${s.peakRssMiB.toFixed(1)} MiB`,
          s.sweepCpuMsPerAttempt.toFixed(3),
          s.emulatorCpuMsPerRead.toFixed(3),
        ],
        w,
      ),
    ),
    ...rows.map(
      (s) =>
        `  ${s.attempts}: raw before ${s.rawBefore} / after ${s.rawAfter} req/s; emulator CPU per raw read ${s.emulatorCpuMsPerRawRead} ms; raw client CPU per read ${s.rawClientCpuMsPerRead} ms; report ${JSON.stringify({ ...s.report, owner: undefined })}`,
    ),
  ].join('\n');
}

async function main(): Promise<void> {
  const startedAt = performance.now();
  const dir = mkdtempSync(join(tmpdir(), 'verify-kit-bench-'));
  const children: Child[] = [];
  const results: {
    landing?: Comparison;
    start?: Comparison;
    duplicates?: DuplicateFigures[];
    sweep?: SweepFigures[];
    pgLanding?: Comparison;
    pgSweep?: PgSweepFigures;
  } = {};
  log(
    `config ${JSON.stringify({ ...config, phases: config.phases })}; ${cpus().length} CPUs, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  try {
    const kitChild = spawnChild('./app-child.ts', 'kit');
    const baseChild = spawnChild('./app-child.ts', 'baseline');
    children.push(kitChild, baseChild);
    const [{ port: kitPort }, { port: basePort }] = await Promise.all([
      kitChild.call<{ port: number }>('port', undefined, 60_000),
      baseChild.call<{ port: number }>('port', undefined, 60_000),
    ]);
    // The same two apps on PostgreSQL (the kit's store; the baseline on plain node-postgres).
    const pgKitChild = config.phases.includes('pg-landing') ? spawnChild('./app-child.ts', 'kit') : undefined;
    const pgBaseChild = config.phases.includes('pg-landing') ? spawnChild('./app-child.ts', 'baseline') : undefined;
    for (const c of [pgKitChild, pgBaseChild]) if (c !== undefined) children.push(c);
    const pgPorts =
      pgKitChild && pgBaseChild
        ? ((
            await Promise.all([pgKitChild, pgBaseChild].map((c) => c.call<{ port: number }>('port', undefined, 60_000)))
          ).map((answer) => answer.port) as [number, number])
        : undefined;
    // Random per run; passed to children only over IPC; never printed or written.
    const secret = () => `bench-${randomBytes(24).toString('base64url')}`;
    const kitClient: SeedClient = {
      clientId: 'bench-kit',
      secret: secret(),
      returnUrl: `http://localhost:${kitPort}/verify/return`,
    };
    const baseClient: SeedClient = {
      clientId: 'bench-baseline',
      secret: secret(),
      returnUrl: `http://localhost:${basePort}/verify/return`,
    };
    const sweepClient: SeedClient = {
      clientId: 'bench-sweep',
      secret: secret(),
      returnUrl: 'http://localhost:9/verify/return',
    };
    const pgClients: SeedClient[] =
      pgPorts === undefined
        ? []
        : [
            { clientId: 'bench-pg-kit', secret: secret(), returnUrl: `http://localhost:${pgPorts[0]}/verify/return` },
            {
              clientId: 'bench-pg-baseline',
              secret: secret(),
              returnUrl: `http://localhost:${pgPorts[1]}/verify/return`,
            },
          ];
    const emulator = spawnChild('./emulator-child.ts', 'emulator');
    children.push(emulator);
    const clients = [kitClient, baseClient, sweepClient, ...pgClients];
    const { url: emulatorUrl } = await emulator.call<{ url: string }>('start', { clients }, 60_000);
    await kitChild.call('configure', {
      emulatorUrl,
      clientId: kitClient.clientId,
      secret: kitClient.secret,
      returnUrl: kitClient.returnUrl,
      dbPath: join(dir, 'kit.sqlite'),
    });
    await baseChild.call('configure', {
      emulatorUrl,
      clientId: baseClient.clientId,
      secret: baseClient.secret,
      returnUrl: baseClient.returnUrl,
      dbPath: join(dir, 'baseline.sqlite'),
    });
    const sides: [Side, Side] = [
      { name: 'kit', child: kitChild, origin: `http://127.0.0.1:${kitPort}`, client: kitClient },
      { name: 'baseline', child: baseChild, origin: `http://127.0.0.1:${basePort}`, client: baseClient },
    ];

    if (config.phases.includes('landing')) results.landing = await landingPhase(emulatorUrl, emulator, sides);
    if (config.phases.includes('start')) results.start = await startPhase(emulatorUrl, emulator, sides);
    if (config.phases.includes('duplicates')) results.duplicates = await duplicatesPhase(emulatorUrl, sides);
    await kitChild.stop();
    await baseChild.stop();
    if (config.phases.includes('sweep')) results.sweep = await sweepPhase(emulatorUrl, emulator, sweepClient, dir);
    if (pgKitChild !== undefined && pgBaseChild !== undefined && pgPorts !== undefined) {
      const [kitDb, baseDb] = await Promise.all([createTestDatabase({ max: 1 }), createTestDatabase({ max: 1 })]);
      try {
        const [pgKit, pgBase] = pgClients as [SeedClient, SeedClient];
        const configure = (c: SeedClient, databaseUrl: string) => ({
          emulatorUrl,
          clientId: c.clientId,
          secret: c.secret,
          returnUrl: c.returnUrl,
          dbPath: '',
          databaseUrl,
        });
        await pgKitChild.call('configure', configure(pgKit, kitDb.url));
        await pgBaseChild.call('configure', configure(pgBase, baseDb.url));
        const pgSides: [Side, Side] = [
          { name: 'kit', child: pgKitChild, origin: `http://127.0.0.1:${pgPorts[0]}`, client: pgKit },
          { name: 'baseline', child: pgBaseChild, origin: `http://127.0.0.1:${pgPorts[1]}`, client: pgBase },
        ];
        results.pgLanding = await landingPhase(emulatorUrl, emulator, pgSides, 'pg-landing');
      } finally {
        await pgKitChild.stop();
        await pgBaseChild.stop();
        await kitDb.drop();
        await baseDb.drop();
      }
    }
    if (config.phases.includes('pg-sweep')) results.pgSweep = await pgSweepPhase(emulatorUrl, emulator, sweepClient);
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    rmSync(dir, { recursive: true, force: true });
  }

  const { landing, start, duplicates, sweep, pgLanding, pgSweep } = results;
  const targets = targetsOf(landing, start, duplicates, sweep, pgLanding, pgSweep);
  const runSeconds = round1((performance.now() - startedAt) / 1000);
  const out: string[] = [''];
  out.push(
    `Verification kit benchmarks — ${new Date().toISOString()} — node ${process.version}, ${cpus().length} CPUs, load average at end ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  out.push(
    'Loopback only; emulator without artificial latency; each of emulator, kit app, baseline app, load generator in its own process.',
  );
  out.push('');
  if (results.landing) {
    out.push(
      comparisonTable(
        results.landing,
        `Landing: GET /verify/return for a verified, not yet fulfilled attempt (one attempt per request), signed in as its user -> 303; concurrency ${config.concurrency}, ${config.rounds} rounds x ${config.roundRequests} per side, ABBA-interleaved, samples pooled`,
      ),
    );
    out.push('');
  }
  if (results.start) {
    out.push(
      comparisonTable(
        results.start,
        `Start: POST /verify/start (CSRF token, one user per connection) -> 200 auto-submit page; concurrency ${config.concurrency}, ${config.rounds} rounds x ${config.roundRequests} per side, ABBA-interleaved, samples pooled; kit start limits ${process.env.BENCH_KIT_START_LIMITS === 'off' ? 'OFF (BENCH_KIT_START_LIMITS=off)' : 'on (its default) with generous budgets: counted, never hit'}`,
      ),
    );
    out.push('');
  }
  if (results.duplicates) {
    out.push(
      `Duplicates: ${config.duplicates} concurrent landings (${config.duplicates} connections) for ONE verified attempt`,
    );
    const w = [10, 10, 12, 9, 9, 9];
    out.push(pad(['', 'requests', 'fulfilments', 'p50 ms', 'p99 ms', 'max ms'], w));
    for (const d of results.duplicates) {
      out.push(
        pad([d.side, d.requests, d.fulfilments, d.p50.toFixed(2), d.p99.toFixed(2), d.max.toFixed(2)], w) +
          `  statuses ${JSON.stringify(d.statuses)}`,
      );
    }
    out.push('');
  }
  if (results.sweep) {
    out.push(sweepTable(results.sweep));
    if (config.sweepSizes.join(',') !== '10000,100000')
      out.push(
        `  NOTE: sweep sizes were set by BENCH_SWEEP_SIZES=${config.sweepSizes.join(',')} (the targets are set for 10000,100000).`,
      );
    out.push('');
  }
  if (results.pgLanding) {
    out.push(
      comparisonTable(
        results.pgLanding,
        "Landing on PostgreSQL: the kit's PostgreSQL store vs a hand-written node-postgres landing (same steps, " +
          `one transaction: conditional mark + INSERT); concurrency ${config.concurrency}, ` +
          `${config.rounds} rounds x ${config.roundRequests} per side, ABBA-interleaved`,
      ),
    );
    out.push('');
  }
  if (results.pgSweep) {
    const p = results.pgSweep;
    const f = p.floor;
    out.push(
      `Sweep on PostgreSQL: ${p.attempts} due attempts, ${p.processes} sweep processes at once ` +
        `(concurrency ${sweepConcurrency} each, batch 50); raw capacity at c=${p.rawConcurrency} ` +
        `${p.rawCapacity} req/s (before ${p.rawBefore}, after ${p.rawAfter}); seeding ${(p.seedMs / 1000).toFixed(1)} s`,
    );
    for (const [what, r] of [
      ['kit', p],
      ['floor', f],
    ] as const) {
      out.push(
        `  ${what.padEnd(5)} ${r.attemptsPerSecond} attempts/s in ${(r.wallMs / 1000).toFixed(1)} s ` +
          `(fulfilled ${r.fulfilledByProcess.join(' + ')}); fraction ${r.fractionOfRaw}; ` +
          `grants ${r.grants} (${r.distinctGrants} distinct); peak RSS ${r.peakRssMiB.join(' / ')} MiB; ` +
          `CPU ms per attempt: sweep processes ${r.sweepCpuMsPerAttempt}, emulator ${r.emulatorCpuMsPerAttempt}, ` +
          `PostgreSQL backends ${r.postgresCpuMsPerAttempt}`,
      );
    }
    out.push(
      `  floor = by hand, the least work per attempt (a read, and a share of one statement per 50 that marks them` +
        (config.pgFloorGrants === 'each'
          ? `, then the grants' INSERT per attempt in its transaction (BENCH_PG_FLOOR_GRANTS=each)`
          : ' and writes their grants') +
        `; no claim, each process its own share): kit/floor rate ${p.kitOverFloor}`,
    );
    out.push('');
  }
  out.push('Targets (pg-*: several instances on PostgreSQL)');
  for (const t of targets) out.push(`  ${t.met ? 'met   ' : 'MISSED'}  ${t.name}: ${t.value} (target ${t.target})`);
  if (!config.phases.every((p) => PHASES.includes(p)) || config.phases.length < PHASES.length) {
    out.push(`  NOTE: only phases ${config.phases.join(', ')} were run (BENCH_ONLY).`);
  }
  if (process.env.BENCH_BASELINE_KIT_DIR !== undefined) {
    out.push(
      `  NOTE: the "baseline" side is the kit from ${process.env.BENCH_BASELINE_KIT_DIR}/middleware (BENCH_BASELINE_KIT_DIR): ` +
        'an A/B of two kit versions, so the targets above do not apply.',
    );
  }
  out.push('');
  out.push(`npm run bench took ${runSeconds} s.`);
  process.stdout.write(`${out.join('\n')}\n`);

  const resultsDir = fileURLToPath(new URL('./results', import.meta.url));
  mkdirSync(resultsDir, { recursive: true });
  const json = {
    generatedAt: new Date().toISOString(),
    machine: {
      node: process.version,
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model,
      loadAverageAtEnd: loadavg().map(round2),
    },
    config: {
      ...config,
      sweepConcurrencyUsed: sweepConcurrency,
      kitStartLimits: process.env.BENCH_KIT_START_LIMITS === 'off' ? 'off' : 'on, generous budgets',
    },
    runSeconds,
    ...results,
    targets,
  };
  const file = process.env.BENCH_OUTPUT ?? join(resultsDir, 'latest.json');
  writeFileSync(file, `${JSON.stringify(json, null, 2)}\n`);
  log(`wrote ${file}`);
}

main().catch((error: unknown) => {
  process.stderr.write(`[bench] failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
