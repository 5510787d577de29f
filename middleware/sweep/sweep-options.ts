/**
 * Every argument check of the sweep, its worker and its job in one place: each collects all its
 * problems into one KitError `invalid_options` naming the fix, and returns the complete options.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { KitLogger } from '../logger.ts';
import { integerInRange, isRecord, OptionProblems, shownNumber } from '../options/option-problems.ts';
import { resolveRetention, type ResolvedRetention, type RetentionOptions } from './retention.ts';
import type { SweepReport } from './sweep-report.ts';
import { monotonicClock } from './time-budget.ts';

/** The spec's outcome window: a session's outcome is readable for 24 hours. */
export const SWEEP_WINDOW_MS = 24 * 60 * 60 * 1000;

/** Status reads in flight in one sweep run, unless `concurrency` says otherwise. */
export const DEFAULT_SWEEP_CONCURRENCY = 4;

/** Options of one sweep run (`kit.runSweep`). */
/** A run's time budget when none is given. */
export const DEFAULT_TIME_BUDGET_MS = 60_000;

/** Attempts claimed per store call, unless `batchSize` says otherwise. */
export const DEFAULT_BATCH_SIZE = 50;

/** How long a claim holds, unless `leaseMs` says otherwise. */
export const DEFAULT_LEASE_MS = 120_000;

/**
 * The range of each whole-number setting of a run; the sweep job checks its flags against the
 * same, in the flags' own units.
 */
export const SWEEP_RANGES = {
  batchSize: { min: 1, max: 1000 },
  concurrency: { min: 1, max: 64 },
  leaseMs: { min: 1000, max: SWEEP_WINDOW_MS },
  timeBudgetMs: { min: 100, max: SWEEP_WINDOW_MS },
} as const;

export interface SweepOptions {
  /** Attempts claimed per store call. Default 50 (1..1000). */
  batchSize?: number;
  /** Status reads in flight at once. Default 4 (1..64). */
  concurrency?: number;
  /** How long a claim holds before another worker may take the attempt. Default 120 000 ms (>= 1000). */
  leaseMs?: number;
  /** How long a run reads: none starts in its last half, one unanswered at its end is read again later. Default 60 000 ms (>= 100). */
  timeBudgetMs?: number;
  /**
   * Your own delays between reads of a still-pending attempt, by reads so far; the last repeats.
   * Default: the read ages of DEFAULT_SWEEP_READ_AGES_MS (16 reads over the 24 h window).
   */
  backoffMs?: readonly number[];
  /** Delay before re-reading after a transient service error (unreachable, protocol). Default 30 000 ms. */
  errorRetryMs?: number;
  /**
   * Status reads a second that all sweep processes sharing the store make together, at most
   * (e.g. a share of the service's limit). Default: no cap; the sweep still slows down whenever
   * the service answers 429.
   */
  maxReadsPerSecond?: number;
  /** How long settled attempts keep their params and destination, and are kept at all; false keeps everything. */
  retention?: RetentionOptions | false;
  /** Identifies this worker's claims. Default `<host>:<pid>:<random>`; share it with releaseClaims. */
  owner?: string;
  /** Abort to stop claiming and starting reads; in-flight reads finish, unstarted claims are released. */
  signal?: AbortSignal;
  /** The run's line, warnings and errors. Default: the kit's logger (the fulfil path always logs there). */
  logger?: KitLogger;
}

export interface ResolvedSweepOptions {
  batchSize: number;
  concurrency: number;
  leaseMs: number;
  timeBudgetMs: number;
  /** Undefined: the default read ages. */
  backoffMs: readonly number[] | undefined;
  errorRetryMs: number;
  retention: ResolvedRetention | false;
  owner: string;
  maxReadsPerSecond: number | undefined;
  /** The clock of the run's time budget (the deps' `monotonicNow`, else performance.now). */
  monotonicNow: () => number;
}

/** Options of `kit.startSweepWorker`: the interval, and the options of each run. */
export interface SweepWorkerOptions extends Omit<SweepOptions, 'signal'> {
  /** Pause between the end of one run and the start of the next, in ms (>= 10). */
  intervalMs: number;
  /** Wait this long before the first run. Default 0 (run at once). */
  initialDelayMs?: number;
  /**
   * How long stop() waits for in-flight reads before releasing claims anyway, and then for the store
   * to release them (claims it has not released by then lapse with their lease). Default 10 000 ms.
   */
  stopTimeoutMs?: number;
  /** Called after every completed run (e.g. metrics); not awaited. A throw or a rejection is logged. */
  onReport?: (report: SweepReport) => void;
  /** Called when a run fails (the store failed); the worker carries on at the next interval. Not awaited; a throw or a rejection is logged. */
  onError?: (error: unknown) => void;
}

/** A fresh owner id: host, pid and a random suffix (two workers in one process differ). */
export function newSweepOwner(): string {
  return `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

function checkBackoff(problems: OptionProblems, value: unknown): readonly number[] | undefined {
  if (value === undefined) return undefined;
  const delay = (d: unknown) => typeof d === 'number' && Number.isInteger(d) && d >= 1000 && d <= SWEEP_WINDOW_MS;
  if (Array.isArray(value) && value.length > 0 && value.every(delay)) return [...value];
  problems.add(
    '`backoffMs` must be a non-empty array of delays in whole milliseconds, each at least 1000, e.g. [30000, 60000, 300000]; the last one repeats. Leave it out for the default read ages.',
  );
  return undefined;
}

/** The most `maxReadsPerSecond` may say. */
export const MAX_READS_PER_SECOND = 1_000_000;

/** `maxReadsPerSecond` (a run's, or the kit's `sweep.maxReadsPerSecond`): a positive rate, or undefined. */
export function checkReadCap(problems: OptionProblems, value: unknown, name = 'maxReadsPerSecond'): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'number' && Number.isFinite(value) && value > 0 && value <= MAX_READS_PER_SECOND) return value;
  problems.add(
    `\`${name}\` must be a positive number of status reads a second (at most ${MAX_READS_PER_SECOND}) shared by every sweep process, e.g. 200; leave it out for no cap.`,
  );
  return undefined;
}

function checkOwner(problems: OptionProblems, value: unknown): string {
  if (value === undefined) return newSweepOwner();
  if (typeof value === 'string' && value.length > 0 && value.length <= 200) return value;
  problems.add(
    '`owner` must be a non-empty string of at most 200 characters, unique per worker; leave it out to generate one.',
  );
  return newSweepOwner();
}

/** The deps' `monotonicNow`: a function, or performance.now when left out. */
function checkMonotonicClock(problems: OptionProblems, value: unknown): () => number {
  if (value === undefined) return monotonicClock;
  if (typeof value === 'function') return value as () => number;
  problems.add(
    `the deps' \`monotonicNow\` must be a function returning milliseconds that never go back, e.g. () => performance.now(); got ${typeof value}. Leave it out for performance.now.`,
  );
  return monotonicClock;
}

/**
 * Checks a run's options into `problems` and fills in defaults; `monotonicNow` is the deps' clock
 * of the time budget.
 */
export function checkSweepOptions(
  problems: OptionProblems,
  options: SweepOptions,
  monotonicNow?: unknown,
): ResolvedSweepOptions {
  const window = { max: SWEEP_WINDOW_MS, unit: ' ms' };
  return {
    batchSize: integerInRange(problems, 'batchSize', options.batchSize, {
      ...SWEEP_RANGES.batchSize,
      fallback: DEFAULT_BATCH_SIZE,
    }),
    concurrency: integerInRange(problems, 'concurrency', options.concurrency, {
      ...SWEEP_RANGES.concurrency,
      fallback: DEFAULT_SWEEP_CONCURRENCY,
    }),
    leaseMs: integerInRange(problems, 'leaseMs', options.leaseMs, {
      ...SWEEP_RANGES.leaseMs,
      fallback: DEFAULT_LEASE_MS,
      unit: ' ms',
    }),
    timeBudgetMs: integerInRange(problems, 'timeBudgetMs', options.timeBudgetMs, {
      ...SWEEP_RANGES.timeBudgetMs,
      fallback: DEFAULT_TIME_BUDGET_MS,
      unit: ' ms',
    }),
    errorRetryMs: integerInRange(problems, 'errorRetryMs', options.errorRetryMs, {
      min: 1000,
      fallback: 30_000,
      ...window,
    }),
    backoffMs: checkBackoff(problems, options.backoffMs),
    owner: checkOwner(problems, options.owner),
    retention: resolveRetention(problems, options.retention),
    maxReadsPerSecond: checkReadCap(problems, options.maxReadsPerSecond),
    monotonicNow: checkMonotonicClock(problems, monotonicNow),
  };
}

/**
 * Validates a sweep run's options (and its deps' `monotonicNow`) and fills in defaults. Throws
 * KitError('invalid_options') naming each fix.
 */
export function resolveSweepOptions(
  options: SweepOptions = {},
  where = 'runSweep',
  monotonicNow?: unknown,
): ResolvedSweepOptions {
  const problems = new OptionProblems(where);
  const fields: unknown = options;
  if (!isRecord(fields)) problems.add('the options must be an object, e.g. { batchSize: 50 }.');
  const resolved = checkSweepOptions(problems, isRecord(fields) ? options : {}, monotonicNow);
  problems.throwIfAny();
  return resolved;
}

export interface ResolvedWorkerOptions {
  intervalMs: number;
  initialDelayMs: number;
  stopTimeoutMs: number;
  onReport: ((report: SweepReport) => void) | undefined;
  onError: ((error: unknown) => void) | undefined;
  /** The options of every run (the owner fixed once for the worker's lifetime). */
  sweep: Omit<SweepOptions, 'signal'> & { owner: string };
}

/** Validates the worker's options (its runs' options included, so a mistake fails now, not in the first run). */
export function resolveWorkerOptions(options: SweepWorkerOptions): ResolvedWorkerOptions {
  const problems = new OptionProblems('startSweepWorker');
  const fields: unknown = options;
  if (!isRecord(fields)) {
    problems.add('pass options, e.g. { intervalMs: 60000 }.');
    problems.throwIfAny();
  }
  const { intervalMs, initialDelayMs, stopTimeoutMs, onReport, onError, ...sweep } = options;
  const timing = (name: string, value: unknown, min: number, fallback?: number): number => {
    if (value === undefined && fallback !== undefined) return fallback;
    if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= 2 ** 31 - 1) return value;
    problems.add(
      `\`${name}\` must be a whole number of milliseconds, at least ${min}; got ${shownNumber(value)}. For one run a minute pass { ${name}: 60000 }.`,
    );
    return fallback ?? min;
  };
  const resolved: ResolvedWorkerOptions = {
    intervalMs: timing('intervalMs', intervalMs, 10),
    initialDelayMs: timing('initialDelayMs', initialDelayMs, 0, 0),
    stopTimeoutMs: timing('stopTimeoutMs', stopTimeoutMs, 0, 10_000),
    onReport,
    onError,
    sweep: { ...sweep, owner: checkSweepOptions(problems, sweep).owner },
  };
  problems.throwIfAny();
  return resolved;
}
