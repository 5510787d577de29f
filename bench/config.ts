/** The bench's configuration: every BENCH_* variable, checked when read (docs/performance.md lists them). */
import { cpus, loadavg } from 'node:os';

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
  const raw = process.env.BENCH_PG_FLOOR_GRANTS ?? 'each';
  if (raw === 'batched' || raw === 'each') return raw;
  throw new Error(`BENCH_PG_FLOOR_GRANTS must be batched or each; got ${JSON.stringify(raw)}`);
}

export const PHASES = [
  'day',
  'pumping',
  'pumping-replay',
  'pumping-cost',
  'landing',
  'start',
  'start-entered',
  'duplicates',
  'rate-limited',
  'sweep',
  'pg-landing',
  'pg-sweep',
] as const;
export type Phase = (typeof PHASES)[number];

export const config = {
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
  /** Runs of each SQLite sweep size, each from the same seeded file; its target is the median run. */
  sweepRounds: intEnv('BENCH_SWEEP_ROUNDS', 3),
  /** Due attempts of the PostgreSQL sweep, shared by `pgSweepProcesses` sweep processes. */
  pgSweepSize: intEnv('BENCH_PG_SWEEP_SIZE', 100_000),
  pgSweepProcesses: intEnv('BENCH_PG_SWEEP_PROCESSES', 2),
  /** The floor's grants: in its marking statement, or 'each' in a statement of its own (the kit's action contract). */
  pgFloorGrants: floorGrantsEnv(),
  /** Rounds of the PostgreSQL sweep, kit and floor alternating (ABBA); its target is the median. */
  pgSweepRounds: intEnv('BENCH_PG_SWEEP_ROUNDS', 3),
  /** The rate-limited phase: the emulator's status reads a second for the kit's client. */
  rateLimit: intEnv('BENCH_RATE_LIMIT', 300),
  /** Due attempts two sweep processes work through under that limit. */
  rateLimitedSize: intEnv('BENCH_RATE_LIMITED_SIZE', 20_000),
  /** Landings a second, steady, while they do (and for a while before, with no sweep). */
  rateLimitedLandings: intEnv('BENCH_RATE_LIMITED_LANDINGS', 50),
  /** 30 s (each round, half before the sweeps and half after): 1 500 landings, so the p99 alone is not one of a few slow requests. */
  rateLimitedAloneMs: intEnv('BENCH_RATE_LIMITED_ALONE_MS', 30_000),
  /** Landings before the first round, not measured: the app and the database warm up outside the rounds. */
  rateLimitedWarmUpMs: intEnv('BENCH_RATE_LIMITED_WARM_UP_MS', 10_000, 0),
  /**
   * Rounds of the rate-limited phase: each round the landings run alone, beside the sweeps over its
   * share of the attempts, and alone again; the landings' p99 ratio is the median of the rounds' (3 at least).
   */
  rateLimitedRounds: intEnv('BENCH_RATE_LIMITED_ROUNDS', 3),
  /** The simulated day: starts over 24 h of virtual time, and the seed of its traffic model. */
  dayStarts: intEnv('BENCH_DAY_STARTS', 1000),
  daySeed: intEnv('BENCH_DAY_SEED', 45),
  /**
   * Sweep runs of the rate-limited phase, each of BENCH_RATE_LIMITED_RUN_MS, BENCH_RATE_LIMITED_PAUSE_MS
   * apart (the worker's interval): the pace learned in one run must hold after the pause. 1 (the
   * default): one run until every attempt is fulfilled (BENCH_SWEEP_BUDGET_MS).
   */
  rateLimitedRuns: intEnv('BENCH_RATE_LIMITED_RUNS', 1),
  rateLimitedRunMs: intEnv('BENCH_RATE_LIMITED_RUN_MS', 30_000),
  rateLimitedPauseMs: intEnv('BENCH_RATE_LIMITED_PAUSE_MS', 60_000, 0),
  rawRequests: intEnv('BENCH_RAW_REQUESTS', 15_000),
  rawMaxMs: intEnv('BENCH_RAW_MAX_MS', 10_000),
  seedConcurrency: intEnv('BENCH_SEED_CONCURRENCY', 16),
  phases: (process.env.BENCH_ONLY ?? PHASES.join(','))
    .split(',')
    .map((s) => s.trim())
    .filter((s): s is Phase => (PHASES as readonly string[]).includes(s)),
};
export const sweepConcurrency = config.sweepConcurrency ?? config.kitDefaultSweepConcurrency;

/** What the baseline start spends before its text (bench/children/app/baseline-budgets.ts reads the same variable). */
export const BASELINE_BUDGETS =
  process.env.BENCH_BASELINE_BUDGETS === 'off'
    ? 'baseline start budgets OFF (BENCH_BASELINE_BUDGETS=off)'
    : 'the baseline spends the same budgets by hand (one transaction before the text)';

/** The configuration and the machine, as the run's first log line. */
export function configLine(): string {
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  return `config ${JSON.stringify({ ...config, phases: config.phases })}; ${cpus().length} CPUs, load average ${load}`;
}
