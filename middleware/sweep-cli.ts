/**
 * The reusable body of the copyable sweep job (cron, a systemd timer, a Kubernetes CronJob).
 *
 *   --once                     one sweep, then exit
 *   (default)                  loop: a sweep every --interval-seconds until SIGTERM/SIGINT
 *   --interval-seconds N       pause between runs in loop mode (env SWEEP_INTERVAL_SECONDS; default 60)
 *   --batch-size N             attempts claimed per store call (env SWEEP_BATCH_SIZE; default 50)
 *   --concurrency N            status reads in flight (env SWEEP_CONCURRENCY; default 4)
 *   --time-budget-seconds N    stop claiming after this long per run (env SWEEP_TIME_BUDGET_SECONDS; default 60)
 *   --lease-seconds N          claim lease (env SWEEP_LEASE_SECONDS; default 120)
 *
 * Prints ONE JSON line per run: {"event":"sweep","claimed",..,"fulfilled",..,"failed",..,"pending",
 * ..,"expired",..,"errors",..,"durationMs",..}. Exit codes: 0 done (or stopped by a signal),
 * 1 configuration error, 2 the service could not be reached at all (reads were made and none got
 * a usable answer), 3 the sweep itself failed (e.g. the database). Never prints the client secret.
 */
import { parseArgs } from 'node:util';
import { describeError as describe, type KitLogger } from './logger.ts';
import { OptionProblems } from './option-problems.ts';
import { runSweep, type SweepDeps, type SweepReport } from './sweep.ts';
import { checkSweepOptions, newSweepOwner, type SweepOptions } from './sweep-options.ts';
import { startSweepWorker } from './worker.ts';
import type { VerifyClient } from './types.ts';

export const SweepJobExitCode = {
  Ok: 0,
  ConfigError: 1,
  ServiceUnreachable: 2,
  SweepFailed: 3,
} as const;

export type SweepJobEnv = Readonly<Record<string, string | undefined>>;

/** Deps the job may build itself; when it builds them it also closes them. */
export type SweepJobDeps<Tx> = SweepDeps<Tx> & {
  client: SweepDeps<Tx>['client'] & Partial<Pick<VerifyClient, 'close'>>;
};

export interface SweepJobOptions<Tx> {
  /**
   * The sweep's dependencies, or a function building them from `env` (the integrator's own
   * configuration). A factory that throws is reported as a configuration error (exit 1), and the
   * client and store it built are closed when the job ends.
   */
  deps: SweepJobDeps<Tx> | ((env: SweepJobEnv) => SweepJobDeps<Tx> | Promise<SweepJobDeps<Tx>>);
  /** Command-line arguments, without node and the script: `process.argv.slice(2)`. */
  argv: readonly string[];
  /** Environment for SWEEP_* settings and the deps factory. Default `process.env`. */
  env?: SweepJobEnv;
  /** Receives each output line (no trailing newline). Default: write to stdout. */
  print?: (line: string) => void;
  /** Defaults for the sweep, overridden by env and then argv (e.g. a shorter lease). */
  sweep?: Omit<SweepOptions, 'signal' | 'logger' | 'owner'>;
  /** Stop the job (as SIGTERM would). */
  signal?: AbortSignal;
  /** Stop gracefully on SIGTERM/SIGINT. Default true. */
  handleSignals?: boolean;
  /** How long a stop waits for in-flight reads before releasing claims. Default 10 000 ms. */
  stopTimeoutMs?: number;
  /** Warnings and errors of individual checks (pino-compatible). Default: none (counts only). */
  logger?: KitLogger;
}

const USAGE = `usage: sweep-job [--once] [--interval-seconds N] [--batch-size N] [--concurrency N] [--time-budget-seconds N] [--lease-seconds N]`;

function secondsToMs(problems: OptionProblems, name: string, raw: string): number | undefined {
  const seconds = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(seconds) || seconds <= 0) {
    problems.add(`${name} must be a positive number of seconds, e.g. ${name} 60; got ${JSON.stringify(raw)}.`);
    return undefined;
  }
  return Math.round(seconds * 1000);
}

function toInteger(problems: OptionProblems, name: string, raw: string): number | undefined {
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(value)) {
    problems.add(`${name} must be a whole number, e.g. ${name} 50; got ${JSON.stringify(raw)}.`);
    return undefined;
  }
  return value;
}

interface JobConfig {
  once: boolean;
  help: boolean;
  intervalMs: number;
  sweep: Omit<SweepOptions, 'signal' | 'logger'>;
}

const FLAGS = {
  once: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  'interval-seconds': { type: 'string' },
  'batch-size': { type: 'string' },
  concurrency: { type: 'string' },
  'time-budget-seconds': { type: 'string' },
  'lease-seconds': { type: 'string' },
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
function parseJobConfig(
  argv: readonly string[],
  env: SweepJobEnv,
  defaults: SweepJobOptions<unknown>['sweep'],
): JobConfig {
  const problems = new OptionProblems('sweep job');
  const values = parseFlags(problems, argv);
  const read = <T>(flag: keyof Flags, envName: string, parse: (p: OptionProblems, n: string, raw: string) => T) => {
    const fromArgv = values[flag];
    if (typeof fromArgv === 'string') return parse(problems, `--${flag}`, fromArgv);
    const fromEnv = env[envName];
    return fromEnv === undefined || fromEnv === '' ? undefined : parse(problems, envName, fromEnv);
  };
  const given = {
    batchSize: read('batch-size', 'SWEEP_BATCH_SIZE', toInteger),
    concurrency: read('concurrency', 'SWEEP_CONCURRENCY', toInteger),
    timeBudgetMs: read('time-budget-seconds', 'SWEEP_TIME_BUDGET_SECONDS', secondsToMs),
    leaseMs: read('lease-seconds', 'SWEEP_LEASE_SECONDS', secondsToMs),
  };
  const sweep: JobConfig['sweep'] = { ...defaults };
  for (const [key, value] of Object.entries(given)) if (value !== undefined) Object.assign(sweep, { [key]: value });
  const intervalMs = read('interval-seconds', 'SWEEP_INTERVAL_SECONDS', secondsToMs) ?? 60_000;
  if (values.once === true && typeof values['interval-seconds'] === 'string') {
    problems.add('--once runs a single sweep; drop --interval-seconds, or drop --once to loop.');
  }
  checkSweepOptions(problems, sweep);
  problems.throwIfAny();
  return { once: values.once === true, help: values.help === true, intervalMs, sweep };
}

/** Values that must never reach the output: anything in env that looks like a secret. */
function redactor(env: SweepJobEnv): (line: string) => string {
  const secrets = Object.entries(env)
    .filter(([key, value]) => /SECRET|PASSWORD|TOKEN|KEY/i.test(key) && typeof value === 'string' && value.length >= 4)
    .map(([, value]) => value as string);
  return (line) => secrets.reduce((out, secret) => out.split(secret).join('[redacted]'), line);
}

export function sweepLine(report: SweepReport, mode: 'once' | 'loop'): Record<string, unknown> {
  return {
    event: 'sweep',
    mode,
    time: new Date().toISOString(),
    claimed: report.claimed,
    fulfilled: report.fulfilled,
    failed: report.failed,
    pending: report.pending,
    expired: report.expired,
    superseded: report.superseded,
    outcomesDelivered: report.outcomesDelivered,
    outcomeDeliveryErrors: report.outcomeDeliveryErrors,
    errors: report.errors,
    alreadyFulfilled: report.alreadyFulfilled,
    released: report.released,
    reads: report.reads,
    durationMs: report.durationMs,
    serviceReachable: report.serviceReachable,
    stoppedBy: report.stoppedBy,
  };
}

/** Runs the job; resolves with the process exit code (it never calls process.exit itself). */
export async function runSweepJob<Tx>(options: SweepJobOptions<Tx>): Promise<number> {
  const env = options.env ?? process.env;
  const redact = redactor(env);
  const rawPrint = options.print ?? ((line: string) => void process.stdout.write(`${line}\n`));
  const emit = (obj: Record<string, unknown>) => rawPrint(redact(JSON.stringify(obj)));
  const stopTimeoutMs = options.stopTimeoutMs ?? 10_000;

  let config: JobConfig;
  let deps: SweepJobDeps<Tx>;
  const owned = typeof options.deps === 'function';
  try {
    config = parseJobConfig(options.argv, env, options.sweep);
    if (config.help) {
      rawPrint(USAGE);
      return SweepJobExitCode.Ok;
    }
    deps = typeof options.deps === 'function' ? await options.deps(env) : options.deps;
  } catch (error) {
    emit({ event: 'sweep_config_error', message: error instanceof Error ? error.message : String(error) });
    return SweepJobExitCode.ConfigError;
  }

  // Stop on SIGTERM/SIGINT or the caller's signal.
  const stop = new AbortController();
  const onSignal = (name: string) => {
    if (!stop.signal.aborted) emit({ event: 'sweep_stopping', signal: name });
    stop.abort();
  };
  const onTerm = () => onSignal('SIGTERM');
  const onInt = () => onSignal('SIGINT');
  const handleSignals = options.handleSignals ?? true;
  if (handleSignals) {
    process.on('SIGTERM', onTerm);
    process.on('SIGINT', onInt);
  }
  const onExternal = () => onSignal('abort');
  options.signal?.addEventListener('abort', onExternal, { once: true });
  if (options.signal?.aborted) onExternal();

  try {
    if (config.once) return await runOnceMode(deps, config, stop.signal, stopTimeoutMs, emit, options.logger);
    return await runLoopMode(deps, config, stop.signal, stopTimeoutMs, emit, options.logger);
  } finally {
    if (handleSignals) {
      process.off('SIGTERM', onTerm);
      process.off('SIGINT', onInt);
    }
    options.signal?.removeEventListener('abort', onExternal);
    if (owned) {
      await deps.client.close?.().catch(() => {});
      await deps.store.close().catch(() => {});
    }
  }
}

async function runOnceMode<Tx>(
  deps: SweepDeps<Tx>,
  config: JobConfig,
  signal: AbortSignal,
  stopTimeoutMs: number,
  emit: (obj: Record<string, unknown>) => void,
  logger: KitLogger | undefined,
): Promise<number> {
  const owner = newSweepOwner();
  const run = runSweep(deps, { ...config.sweep, owner, signal, ...(logger ? { logger } : {}) });
  // After a stop, wait at most stopTimeoutMs for in-flight reads, then hand the claims back.
  let timer: NodeJS.Timeout | undefined;
  const stopped = new Promise<'timeout'>((resolve) => {
    const arm = () => {
      timer = setTimeout(() => resolve('timeout'), stopTimeoutMs);
    };
    if (signal.aborted) arm();
    else signal.addEventListener('abort', arm, { once: true });
  });
  try {
    const outcome = await Promise.race([run, stopped]);
    if (outcome === 'timeout') {
      run.catch(() => {});
      await deps.store.releaseClaims(owner).catch(() => 0);
      emit({
        event: 'sweep_stopped',
        reason: 'in-flight reads did not finish within the stop timeout; claims released',
      });
      return SweepJobExitCode.Ok;
    }
    emit(sweepLine(outcome, 'once'));
    return outcome.serviceReachable ? SweepJobExitCode.Ok : SweepJobExitCode.ServiceUnreachable;
  } catch (error) {
    emit({ event: 'sweep_failed', error: describe(error) });
    return SweepJobExitCode.SweepFailed;
  } finally {
    clearTimeout(timer);
  }
}

async function runLoopMode<Tx>(
  deps: SweepDeps<Tx>,
  config: JobConfig,
  signal: AbortSignal,
  stopTimeoutMs: number,
  emit: (obj: Record<string, unknown>) => void,
  logger: KitLogger | undefined,
): Promise<number> {
  if (signal.aborted) return SweepJobExitCode.Ok;
  // The worker's timers are unref'd; this one keeps a standalone job process alive between runs.
  const keepAlive = setInterval(() => {}, 1 << 30);
  try {
    const worker = startSweepWorker(deps, {
      ...config.sweep,
      intervalMs: config.intervalMs,
      stopTimeoutMs,
      ...(logger ? { logger } : {}),
      onReport: (report) => emit(sweepLine(report, 'loop')),
      onError: (error) => emit({ event: 'sweep_failed', error: describe(error) }),
    });
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    await worker.stop();
    return SweepJobExitCode.Ok;
  } finally {
    clearInterval(keepAlive);
  }
}
