/**
 * The sweep job's settings: flags first, then SWEEP_* environment variables, then the caller's
 * defaults. Every problem is reported at once (one KitError `invalid_options`).
 */
import { parseArgs } from 'node:util';
import { OptionProblems } from '../options/option-problems.ts';
import { checkSweepOptions, type SweepOptions } from './sweep-options.ts';

/** The environment the job reads SWEEP_* settings from (and passes to the kit factory). */
export type SweepJobEnv = Readonly<Record<string, string | undefined>>;

export const USAGE = `usage: sweep-job [--once | --loop] [--interval-seconds N] [--batch-size N] [--concurrency N] [--time-budget-seconds N] [--lease-seconds N] [--max-reads-per-second N] [--nice N]`;

/** The job process's CPU priority (a Unix nice value) unless --nice / SWEEP_NICE says otherwise. */
export const DEFAULT_SWEEP_NICE = 10;

function secondsToMs(problems: OptionProblems, name: string, raw: string): number | undefined {
  const seconds = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(seconds) || seconds <= 0) {
    problems.add(`${name} must be a positive number of seconds, e.g. ${name} 60; got ${JSON.stringify(raw)}.`);
    return undefined;
  }
  return Math.round(seconds * 1000);
}

/** The loop's pause: what the worker takes (10 ms up to the longest a timer waits, about 24.8 days). */
function intervalToMs(problems: OptionProblems, name: string, raw: string): number | undefined {
  const ms = secondsToMs(problems, name, raw);
  if (ms === undefined) return undefined;
  if (ms < 10 || ms > 2 ** 31 - 1) {
    problems.add(`${name} must be from 0.01 to 2147483 seconds, e.g. ${name} 60; got ${JSON.stringify(raw)}.`);
    return undefined;
  }
  return ms;
}

function toInteger(problems: OptionProblems, name: string, raw: string): number | undefined {
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(value)) {
    problems.add(`${name} must be a whole number, e.g. ${name} 50; got ${JSON.stringify(raw)}.`);
    return undefined;
  }
  return value;
}

function toRate(problems: OptionProblems, name: string, raw: string): number | undefined {
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value) || value <= 0) {
    problems.add(
      `${name} must be a positive number of status reads a second, e.g. ${name} 200; got ${JSON.stringify(raw)}.`,
    );
    return undefined;
  }
  return value;
}

function toNice(problems: OptionProblems, name: string, raw: string): number | undefined {
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || value > 19) {
    problems.add(
      `${name} must be a nice value from 0 (keep the priority) to 19 (the lowest); got ${JSON.stringify(raw)}.`,
    );
    return undefined;
  }
  return value;
}

export interface JobConfig {
  once: boolean;
  help: boolean;
  intervalMs: number;
  /** The CPU priority the job's process lowers itself to (0: keeps its own). */
  nice: number;
  sweep: Omit<SweepOptions, 'signal' | 'logger'>;
}

const FLAGS = {
  once: { type: 'boolean' },
  loop: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  'interval-seconds': { type: 'string' },
  'batch-size': { type: 'string' },
  concurrency: { type: 'string' },
  'time-budget-seconds': { type: 'string' },
  'lease-seconds': { type: 'string' },
  'max-reads-per-second': { type: 'string' },
  nice: { type: 'string' },
} as const;

type Flags = ReturnType<typeof parseArgs<{ options: typeof FLAGS; strict: true; allowPositionals: false }>>['values'];

function parseFlags(problems: OptionProblems, argv: readonly string[]): Flags {
  try {
    return parseArgs({ args: [...argv], strict: true, allowPositionals: false, options: FLAGS }).values;
  } catch (error) {
    problems.add(`${error instanceof Error ? error.message : String(error)} ${USAGE}`);
    return {};
  }
}

/** The job's settings from argv, then env, then the defaults; every problem reported at once. */
export function parseJobConfig(
  argv: readonly string[],
  env: SweepJobEnv,
  defaults: Omit<SweepOptions, 'signal' | 'logger' | 'owner'> | undefined,
): JobConfig {
  const problems = new OptionProblems('sweep job');
  const values = parseFlags(problems, argv);
  const read = <T>(flag: keyof Flags, envName: string, parse: (p: OptionProblems, n: string, raw: string) => T) => {
    const fromArgv = values[flag];
    if (typeof fromArgv === 'string') return parse(problems, `--${flag}`, fromArgv);
    const fromEnv = env[envName];
    return fromEnv === undefined || fromEnv === '' ? undefined : parse(problems, envName, fromEnv);
  };
  const batchSize = read('batch-size', 'SWEEP_BATCH_SIZE', toInteger);
  const concurrency = read('concurrency', 'SWEEP_CONCURRENCY', toInteger);
  const timeBudgetMs = read('time-budget-seconds', 'SWEEP_TIME_BUDGET_SECONDS', secondsToMs);
  const leaseMs = read('lease-seconds', 'SWEEP_LEASE_SECONDS', secondsToMs);
  const maxReadsPerSecond = read('max-reads-per-second', 'SWEEP_MAX_READS_PER_SECOND', toRate);
  // A setting left out (or wrong, and reported) keeps the caller's default.
  const sweep: JobConfig['sweep'] = {
    ...defaults,
    ...(batchSize === undefined ? {} : { batchSize }),
    ...(concurrency === undefined ? {} : { concurrency }),
    ...(timeBudgetMs === undefined ? {} : { timeBudgetMs }),
    ...(leaseMs === undefined ? {} : { leaseMs }),
    ...(maxReadsPerSecond === undefined ? {} : { maxReadsPerSecond }),
  };
  const intervalMs = read('interval-seconds', 'SWEEP_INTERVAL_SECONDS', intervalToMs) ?? 60_000;
  const nice = read('nice', 'SWEEP_NICE', toNice) ?? DEFAULT_SWEEP_NICE;
  if (values.once === true && values.loop === true) {
    problems.add('--once and --loop exclude each other: --once runs one sweep (cron, a timer), --loop keeps sweeping.');
  }
  if (values.once === true && typeof values['interval-seconds'] === 'string') {
    problems.add('--once runs a single sweep; drop --interval-seconds, or drop --once to loop.');
  }
  checkSweepOptions(problems, sweep);
  problems.throwIfAny();
  return { once: values.once === true, help: values.help === true, intervalMs, nice, sweep };
}
