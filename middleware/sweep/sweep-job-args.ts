/**
 * The sweep job's settings: flags first, then SWEEP_* environment variables, then the caller's
 * defaults. Every problem is reported at once (one KitError `invalid_options`).
 */
import { parseArgs } from 'node:util';
import { KitError, KitErrorCode, MIN_SECRET_LENGTH } from '../errors.ts';
import { flagGivenTwice } from '../options/command-flags.ts';
import { NOT_REPEATED_SECRET } from '../printable-errors.ts';
import { mayBePhoneNumber, NOT_REPEATED, quotedUnlessNumber } from '../numbers/mask-number.ts';
import { OptionProblems, shownNumber } from '../options/option-problems.ts';
import {
  checkSweepOptions,
  DEFAULT_BATCH_SIZE,
  DEFAULT_LEASE_MS,
  DEFAULT_SWEEP_CONCURRENCY,
  DEFAULT_TIME_BUDGET_MS,
  MAX_READS_PER_SECOND,
  SWEEP_RANGES,
  type SweepOptions,
} from './sweep-options.ts';

/** The environment the job reads SWEEP_* settings from (and passes to the kit factory). */
export type SweepJobEnv = Readonly<Record<string, string | undefined>>;

/** The job process's CPU priority (a Unix nice value) unless --nice / SWEEP_NICE says otherwise. */
export const DEFAULT_SWEEP_NICE = 10;

/** The loop's pause unless --interval-seconds / SWEEP_INTERVAL_SECONDS says otherwise. */
const DEFAULT_INTERVAL_MS = 60_000;

/** A setting as the operator typed it: the flag or the variable, and the text given. */
interface Typed {
  /** `--lease-seconds`, or `SWEEP_LEASE_SECONDS`. */
  name: string;
  raw: string;
}

/** The setting as typed with a good value, to copy: `--lease-seconds 120`, `SWEEP_LEASE_SECONDS=120`. */
function example({ name }: Typed, value: number): string {
  return name.startsWith('--') ? `${name} ${value}` : `${name}=${value}`;
}

/**
 * What a value typed where none of its kind goes may be instead: a secret, pasted on the command
 * line. The flags are read before the configuration, so no redaction knows it yet: a text as long
 * as a secret that is no number is not repeated.
 */

function mayBeSecret(text: string): boolean {
  return text.length >= MIN_SECRET_LENGTH && !/^[\d\s.,+-]*$/.test(text);
}

/** What was typed, unless it may be a phone number or a secret: the job's lines go to its log. */
function got({ raw }: Typed): string {
  return `got ${mayBeSecret(raw) ? NOT_REPEATED_SECRET : quotedUnlessNumber(raw)}`;
}

/**
 * Node's refusal quotes the argument ('--447400123456', or '+447400123456' without its flag): not a
 * number, not a secret. Each argument typed is taken out as a whole first: one holding a quote mark
 * ("sk_live'9f8e…") would otherwise be read as a short quote and the rest of it printed.
 */
function withoutNumbers(message: string, argv: readonly string[]): string {
  let shown = message;
  for (const arg of argv) {
    if (mayBePhoneNumber(arg)) shown = shown.replaceAll(arg, NOT_REPEATED);
    else if (mayBeSecret(arg) && !/^--?[a-z][a-z-]*$/i.test(arg)) shown = shown.replaceAll(arg, NOT_REPEATED_SECRET);
  }
  return shown.replace(/'([^']*)'/g, (quoted, inner: string) => {
    if (inner === NOT_REPEATED || inner === NOT_REPEATED_SECRET) return quoted;
    if (mayBePhoneNumber(inner)) return NOT_REPEATED;
    // An option's name (`--client-secret`, `-s`) is its own; anything else may be what was pasted.
    return /^--?[a-z][a-z-]*$/i.test(inner) || !mayBeSecret(inner) ? quoted : NOT_REPEATED_SECRET;
  });
}

/** A range in milliseconds, said in seconds (the flags' unit), with a good value in seconds. */
interface SecondsRange {
  minMs: number;
  maxMs: number;
  exampleMs: number;
}

/** Seconds, as the flags take them, to the milliseconds the sweep takes, within `range`. */
function secondsToMs(problems: OptionProblems, typed: Typed, range: SecondsRange): number | undefined {
  const seconds = Number(typed.raw);
  const ms = Math.round(seconds * 1000);
  if (typed.raw.trim() !== '' && Number.isFinite(seconds) && ms >= range.minMs && ms <= range.maxMs) return ms;
  problems.add(
    `${typed.name} must be a number of seconds from ${range.minMs / 1000} to ${range.maxMs / 1000}, ` +
      `e.g. ${example(typed, range.exampleMs / 1000)}; ${got(typed)}.`,
  );
  return undefined;
}

function toInteger(
  problems: OptionProblems,
  typed: Typed,
  range: { min: number; max: number; example: number },
): number | undefined {
  const value = Number(typed.raw);
  if (/^\d+$/.test(typed.raw.trim()) && value >= range.min && value <= range.max) return value;
  problems.add(
    `${typed.name} must be a whole number from ${range.min} to ${range.max}, e.g. ${example(typed, range.example)}; ${got(typed)}.`,
  );
  return undefined;
}

function toRate(problems: OptionProblems, typed: Typed): number | undefined {
  const value = Number(typed.raw);
  if (typed.raw.trim() !== '' && Number.isFinite(value) && value > 0 && value <= MAX_READS_PER_SECOND) return value;
  problems.add(
    `${typed.name} must be a positive number of status reads a second, at most ${MAX_READS_PER_SECOND}, ` +
      `e.g. ${example(typed, 200)}; ${got(typed)}.`,
  );
  return undefined;
}

function toNice(problems: OptionProblems, typed: Typed): number | undefined {
  const value = Number(typed.raw);
  if (/^\d+$/.test(typed.raw.trim()) && value <= 19) return value;
  problems.add(
    `${typed.name} must be a nice value from 0 (keep the priority) to 19 (the lowest), e.g. ${example(typed, DEFAULT_SWEEP_NICE)}; ${got(typed)}.`,
  );
  return undefined;
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

/** The flags that take a value, as typed: each may be given once. */
export const JOB_VALUE_FLAGS: readonly string[] = Object.entries(FLAGS)
  .filter(([, { type }]) => type === 'string')
  .map(([name]) => `--${name}`);

/** The job's settings as a usage line shows them: `[--interval-seconds N] [--batch-size N] …`. */
export const JOB_SETTINGS_SYNOPSIS = JOB_VALUE_FLAGS.map((flag) => `[${flag} N]`).join(' ');

/**
 * What a mistake in the job's flags shows unless the job is given its command's own usage: the
 * flags only, since the command that runs the job is the caller's.
 */
export const DEFAULT_JOB_USAGE = `the job's flags: [--once | --loop] ${JOB_SETTINGS_SYNOPSIS} [--help]`;

type Flags = ReturnType<typeof parseArgs<{ options: typeof FLAGS; strict: true; allowPositionals: false }>>['values'];

function parseFlags(problems: OptionProblems, argv: readonly string[], usage: string): Flags {
  const twice = flagGivenTwice(argv, JOB_VALUE_FLAGS);
  if (twice !== undefined) {
    problems.add(`${twice} ${usage}`);
    return {};
  }
  try {
    return parseArgs({ args: [...argv], strict: true, allowPositionals: false, options: FLAGS }).values;
  } catch (error) {
    const message = withoutNumbers(error instanceof Error ? error.message : String(error), argv);
    problems.add(`${message.endsWith('.') ? message : `${message}.`} ${usage}`);
    return {};
  }
}

/**
 * The job's settings from argv, then env, then the defaults; every problem reported at once, a
 * flag's or a variable's in its own name and unit, a mistake in the flags with `usage`.
 */
export function parseJobConfig(
  argv: readonly string[],
  env: SweepJobEnv,
  defaults: Omit<SweepOptions, 'signal' | 'logger' | 'owner'> | undefined,
  usage: string = DEFAULT_JOB_USAGE,
): JobConfig {
  const problems = new OptionProblems('sweep job');
  const values = parseFlags(problems, argv, usage);
  const read = <T>(flag: keyof Flags, envName: string, parse: (p: OptionProblems, typed: Typed) => T) => {
    const fromArgv = values[flag];
    if (typeof fromArgv === 'string') return parse(problems, { name: `--${flag}`, raw: fromArgv });
    const fromEnv = env[envName];
    return fromEnv === undefined || fromEnv === '' ? undefined : parse(problems, { name: envName, raw: fromEnv });
  };
  const { batchSize: batch, concurrency: inFlight, leaseMs: lease, timeBudgetMs: budget } = SWEEP_RANGES;
  const batchSize = read('batch-size', 'SWEEP_BATCH_SIZE', (p, typed) =>
    toInteger(p, typed, { ...batch, example: DEFAULT_BATCH_SIZE }),
  );
  const concurrency = read('concurrency', 'SWEEP_CONCURRENCY', (p, typed) =>
    toInteger(p, typed, { ...inFlight, example: DEFAULT_SWEEP_CONCURRENCY }),
  );
  const timeBudgetMs = read('time-budget-seconds', 'SWEEP_TIME_BUDGET_SECONDS', (p, typed) =>
    secondsToMs(p, typed, { minMs: budget.min, maxMs: budget.max, exampleMs: DEFAULT_TIME_BUDGET_MS }),
  );
  const leaseMs = read('lease-seconds', 'SWEEP_LEASE_SECONDS', (p, typed) =>
    secondsToMs(p, typed, { minMs: lease.min, maxMs: lease.max, exampleMs: DEFAULT_LEASE_MS }),
  );
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
  // What the worker takes: 10 ms up to the longest a timer waits (about 24.8 days), in whole seconds.
  const intervalMs =
    read('interval-seconds', 'SWEEP_INTERVAL_SECONDS', (p, typed) =>
      secondsToMs(p, typed, { minMs: 10, maxMs: 2_147_483_000, exampleMs: DEFAULT_INTERVAL_MS }),
    ) ?? DEFAULT_INTERVAL_MS;
  const nice = read('nice', 'SWEEP_NICE', toNice) ?? DEFAULT_SWEEP_NICE;
  if (values.once === true && values.loop === true) {
    problems.add('--once and --loop exclude each other: --once runs one sweep (cron, a timer), --loop keeps sweeping.');
  }
  if (values.once === true && typeof values['interval-seconds'] === 'string') {
    problems.add('--once runs a single sweep; drop --interval-seconds, or drop --once to loop.');
  }
  // The caller's defaults, given in code, are reported in the option names the code used.
  checkSweepOptions(problems, sweep);
  problems.throwIfAny();
  return { once: values.once === true, help: values.help === true, intervalMs, nice, sweep };
}

/** `stopTimeoutMs` as given, checked now: a wrong one is a configuration error, not a failed run later. */
export function checkStopTimeout(value: unknown): number {
  if (value === undefined) return 10_000;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 2 ** 31 - 1) return value;
  throw new KitError(
    KitErrorCode.InvalidOptions,
    `\`stopTimeoutMs\` must be a whole number of milliseconds, at least 0; got ${shownNumber(value)}. For ten seconds pass 10000.`,
  );
}
