/**
 * The reusable body of the copyable sweep job (cron, a systemd timer, a Kubernetes CronJob).
 *
 *   --once                     one sweep, then exit
 *   --loop (default)           a sweep every --interval-seconds until SIGTERM/SIGINT (a second one
 *                              ends the process at once; its claims lapse with their lease)
 *   --interval-seconds N       pause between runs in loop mode (env SWEEP_INTERVAL_SECONDS; default 60)
 *   --batch-size N             attempts claimed per store call (env SWEEP_BATCH_SIZE; default 50)
 *   --concurrency N            status reads in flight (env SWEEP_CONCURRENCY; default 4)
 *   --time-budget-seconds N    stop claiming after this long per run (env SWEEP_TIME_BUDGET_SECONDS; default 60)
 *   --lease-seconds N          claim lease (env SWEEP_LEASE_SECONDS; default 120)
 *   --max-reads-per-second N   status reads a second, all sweep processes together (env SWEEP_MAX_READS_PER_SECOND)
 *   --nice N                   CPU priority of the job's process, 0-19 (env SWEEP_NICE; default 10; 0 keeps it)
 *
 * Prints ONE JSON line per run: {"event":"sweep","claimed",..,"fulfilled",..,"failed",..,"pending",
 * ..,"expired",..,"errors",..,"durationMs",..}. Exit codes: 0 done (or stopped by a signal),
 * 1 configuration error, 2 the service could not be reached at all (reads were made and none got
 * a usable answer), 3 the sweep itself failed (e.g. the database). Never prints the client secret.
 */
import { keepingProcessAlive, runDetached, withDeadline, type LateRejectionReporter } from '../deadline.ts';
import { environmentSecrets, KitError, KitErrorCode, redactSecretFragments } from '../errors.ts';
import { cutForPrinting, describeQuotingError, withoutUrlPasswords } from '../printable-errors.ts';
import { describeError as describe, type KitLogger } from '../logger.ts';
import { hasMethods } from '../options/option-problems.ts';
import { yieldToRequests } from './cpu-priority.ts';
import { reportLostConnections } from './pool-errors.ts';
import type { SweepReport } from './sweep-report.ts';
import {
  checkStopTimeout,
  DEFAULT_JOB_USAGE,
  parseJobConfig,
  type JobConfig,
  type SweepJobEnv,
} from './sweep-job-args.ts';
import {
  DEFAULT_SWEEP_CONCURRENCY,
  DEFAULT_TIME_BUDGET_MS,
  newSweepOwner,
  type SweepOptions,
  type SweepWorkerOptions,
} from './sweep-options.ts';
import { stopSignal } from './stop-signal.ts';
import { CLAIMS_LAPSE, releaseClaimsWithin, type SweepWorker } from './worker.ts';
import { startWorker, stopWorker } from './job-worker.ts';
import { unhandledErrorEvent, watchUnhandledErrors, type UnhandledErrorWatch } from './unhandled-errors.ts';

/** The sweep job's exit codes. */
export const SweepJobExitCode = {
  Ok: 0,
  ConfigError: 1,
  ServiceUnreachable: 2,
  SweepFailed: 3,
} as const;

export type { SweepJobEnv } from './sweep-job-args.ts';

/**
 * What the job uses of a kit: its sweep, its store (to hand claims back and close) and close.
 * A structural type, so the job does not depend on the factory: a VerificationKit is one. A kit
 * written by hand (JavaScript) may give its worker through a promise: the job awaits it.
 */
export interface SweepJobKit<_Tx = unknown> {
  runSweep(options?: SweepOptions): Promise<SweepReport>;
  startSweepWorker(options: SweepWorkerOptions): SweepWorker;
  store: { releaseClaims(owner: string): Promise<number>; close(): Promise<void> };
  close(): Promise<void>;
}

/** What a kit factory may size the kit by: the job's own settings, parsed from argv and env. */
export interface SweepJobSettings {
  /** Status reads in flight: give the kit's client as many connections (`client: { connections }`). */
  concurrency: number;
}

/** Options of runSweepJob. */
export interface SweepJobOptions<Tx> {
  /**
   * The kit (the same options as the app's: store, actions, onOutcome), or a function building it
   * from `env` (the integrator's own configuration). A factory that throws, or has not built the kit
   * within `stopTimeoutMs`, is reported as a configuration error (exit 1); the kit and the store it
   * built are closed when the job ends.
   */
  kit: SweepJobKit<Tx> | ((env: SweepJobEnv, job: SweepJobSettings) => SweepJobKit<Tx> | Promise<SweepJobKit<Tx>>);
  /** Command-line arguments, without node and the script. Default `process.argv.slice(2)`. */
  argv?: readonly string[];
  /** Environment for SWEEP_* settings and the kit factory. Default `process.env`. */
  env?: SweepJobEnv;
  /**
   * The usage `--help` prints and a mistake in the flags shows: your command and the job's flags,
   * e.g. `usage: node sweep.js (--once | --loop) [--batch-size N] …`. Default: the job's flags only.
   */
  usage?: string;
  /** Receives each output line (no trailing newline). Default: write to stdout. */
  print?: (line: string) => void;
  /** Defaults for the sweep, overridden by env and then argv (e.g. a shorter lease). */
  sweep?: Omit<SweepOptions, 'signal' | 'logger' | 'owner'>;
  /** Stop the job (as SIGTERM would). */
  signal?: AbortSignal;
  /**
   * Stop gracefully on SIGTERM/SIGINT, and end the process at once on a second one. Default true:
   * the job owns its process, and then also lowers its CPU priority to `--nice` (see yieldToRequests)
   * and says an error the configuration's code left unhandled in a line, going on (unhandled-errors.ts).
   */
  handleSignals?: boolean;
  /**
   * How long a stop waits for in-flight reads before releasing claims, and the longest the job waits
   * for each of the integrator's calls around a run: a kit factory building the kit, the store
   * releasing the claims (else they lapse with their lease), and closing what the factory built.
   * Default 10 000 ms.
   */
  stopTimeoutMs?: number;
  /** Warnings and errors of individual checks (pino-compatible). Default: none (counts only). */
  logger?: KitLogger;
}

const ignorePrintFailure = () => {
  // Nowhere left to report it: the output itself failed.
};

/** Values that must never reach the output: anything in env that looks like a secret. */
function redactor(env: SweepJobEnv): (line: string) => string {
  const secrets = environmentSecrets(env);
  // In every form, with every client secret a kit or a client of this process was given (a --config may
  // hold one), any run of 8 characters of one (a configuration's error may quote a secret's start),
  // and a database URL's password (or its URL).
  return (line) => withoutUrlPasswords(redactSecretFragments(line, secrets));
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
    leftToLapse: report.leftToLapse,
    otherClient: report.otherClient,
    reads: report.reads,
    rateLimited: report.rateLimited,
    oldestDueAgeMs: report.oldestDueAgeMs,
    redacted: report.redacted,
    deleted: report.deleted,
    intentsDeleted: report.intentsDeleted,
    grantsDeleted: report.grantsDeleted,
    grantsPurgeSkipped: report.grantsPurgeSkipped,
    stepUpPurgeErrors: report.stepUpPurgeErrors,
    durationMs: report.durationMs,
    serviceReachable: report.serviceReachable,
    stoppedBy: report.stoppedBy,
  };
}

/**
 * The kit the options name: given, or built by the factory (then the job owns it). The factory is
 * the integrator's code: one that has not built the kit within `ms` fails as a configuration error.
 */
async function kitOf<Tx>(
  options: SweepJobOptions<Tx>,
  env: SweepJobEnv,
  config: JobConfig,
  ms: number,
  onLateRejection: LateRejectionReporter,
): Promise<SweepJobKit<Tx>> {
  const factory = options.kit;
  if (typeof factory !== 'function') return aKit(factory, 'the `kit` option');
  const settings = { concurrency: config.sweep.concurrency ?? DEFAULT_SWEEP_CONCURRENCY };
  const late = () =>
    new Error(
      `building the kit did not finish within ${ms} ms: does the configuration wait on something that never answers?`,
    );
  const building = Promise.resolve().then(() => factory(env, settings));
  let built: unknown;
  try {
    // Held open: a standalone job reports a factory that never settles.
    built = await keepingProcessAlive(() =>
      withDeadline('the kit factory', ms, () => building, { late, onLateRejection }),
    );
  } catch (error) {
    // A kit built after the deadline is closed when it comes: its pool must not hold the process.
    const closeLate = async (built: SweepJobKit<Tx>) => {
      await built.close();
      await built.store.close();
    };
    runDetached(
      () => building.then(closeLate),
      () => undefined,
    );
    throw error;
  }
  return aKit(built, 'the kit factory');
}

/**
 * `value` when it is a verification kit. What a configuration gives is the integrator's code: a
 * factory that forgot its `return`, or the kit's options passed instead of a kit, is a
 * configuration error, not a crash in the first call.
 */
function aKit<Tx>(value: unknown, from: string): SweepJobKit<Tx> {
  const store = hasMethods(value, ['runSweep', 'startSweepWorker', 'close'])
    ? (value as { store?: unknown }).store
    : undefined;
  if (!hasMethods(store, ['releaseClaims', 'close'])) {
    throw new KitError(
      KitErrorCode.InvalidOptions,
      `${from} gave something that is not a verification kit (no runSweep, startSweepWorker, close and store): ` +
        "give createVerificationKit(...)'s result, or a function returning it (did the factory forget its `return`?).",
    );
  }
  return value as SweepJobKit<Tx>;
}

/**
 * An integrator's call (the kit factory, a close, the release of claims, a ready kit's runSweep or
 * stop) that rejected after the job's deadline for it, whose line could only say it was late: its
 * reason in a line of its own, once.
 */
function lateRejectionLine(emit: (obj: Record<string, unknown>) => void): LateRejectionReporter {
  return (call, error) => emit({ event: 'sweep_late_rejection', call, error: describe(error) });
}

/** Runs the job; resolves with the process exit code (it never calls process.exit itself). */
export function runSweepJob<Tx>(options: SweepJobOptions<Tx>): Promise<number> {
  return runJob(options, { watchUntilExit: false });
}

/**
 * The job as the sweep command runs it: its process exits a moment after the job returns, so an
 * error the configuration's code leaves unhandled meanwhile is said as during the job, never with
 * Node's stack trace (and its message, which may quote a secret).
 */
export function runSweepJobUntilExit<Tx>(options: SweepJobOptions<Tx>): Promise<number> {
  return runJob(options, { watchUntilExit: true });
}

async function runJob<Tx>(
  options: SweepJobOptions<Tx>,
  { watchUntilExit }: { watchUntilExit: boolean },
): Promise<number> {
  const env = options.env ?? process.env;
  const redact = redactor(env);
  const given = options.print ?? ((line: string) => void process.stdout.write(`${line}\n`));
  // The integrator's print is outside the kit's trust: one that throws or rejects loses its line, never the run.
  const rawPrint = (line: string) => runDetached(() => given(line), ignorePrintFailure);
  // Each text redacted as it was written, then cut (an error of megabytes is no line a log keeps
  // whole), and the line as printed (where JSON escaped it).
  const printable = (_key: string, value: unknown) =>
    typeof value === 'string' ? cutForPrinting(redact(value)) : value;
  const emit = (obj: Record<string, unknown>) => rawPrint(redact(JSON.stringify(obj, printable)));
  let stopTimeoutMs = 10_000;
  let config: JobConfig;
  let kit: SweepJobKit<Tx>;
  let stop: ReturnType<typeof stopSignal> | undefined;
  let unhandled: UnhandledErrorWatch | undefined;
  try {
    stopTimeoutMs = checkStopTimeout(options.stopTimeoutMs);
    const usage = options.usage ?? DEFAULT_JOB_USAGE;
    config = parseJobConfig(options.argv ?? process.argv.slice(2), env, options.sweep, usage);
    if (config.help) {
      rawPrint(usage);
      return SweepJobExitCode.Ok;
    }
    const ownsProcess = options.handleSignals ?? true;
    if (ownsProcess) yieldToRequests(config.nice);
    // The configuration's code runs in the job's process from its loading on.
    if (ownsProcess) unhandled = watchUnhandledErrors((line) => emit(unhandledErrorEvent(line)));
    // Heard while a factory still builds the kit too: the job then ends by the build's deadline at the latest.
    stop = stopSignal({ handleSignals: ownsProcess, signal: options.signal }, emit);
    kit = await kitOf(options, env, config, stopTimeoutMs, lateRejectionLine(emit));
    unhandled?.ready();
  } catch (error) {
    stop?.dispose();
    if (watchUntilExit) unhandled?.keepUntilExit();
    else unhandled?.dispose();
    // A secret pasted without its quotes is a name "not defined": such errors show where, not what.
    emit({ event: 'sweep_config_error', message: describeQuotingError(error) ?? describe(error).message });
    return SweepJobExitCode.ConfigError;
  }

  const mode = { config, signal: stop.signal, stopTimeoutMs, emit, logger: options.logger };
  // Heard until the store and what the configuration owns are closed: a connection the database
  // ends meanwhile is a line, never the process's end.
  const stopReporting = reportLostConnections(kit.store, emit);
  try {
    // Held open while it runs: the run's deadlines and the worker's timers are unref'd, so a store
    // call that never settles and holds nothing would end a standalone job with exit 13, unsaid.
    return await keepingProcessAlive(() => (config.once ? runOnceMode(kit, mode) : runLoopMode(kit, mode)));
  } finally {
    stop.dispose();
    if (typeof options.kit === 'function') {
      await closeWithin(stopTimeoutMs, 'kit', () => kit.close(), emit);
      await closeWithin(stopTimeoutMs, 'store', () => kit.store.close(), emit);
    }
    stopReporting();
    if (watchUntilExit) unhandled?.keepUntilExit();
    else unhandled?.dispose();
  }
}

/**
 * Closes what the job built. A configuration's `close` is the integrator's code, outside the kit's
 * trust for liveness: one that hangs or fails is reported in a line and never holds the job open.
 */
async function closeWithin(
  ms: number,
  what: 'kit' | 'store',
  close: () => Promise<void>,
  emit: (obj: Record<string, unknown>) => void,
): Promise<void> {
  try {
    // Held open: a close that never settles and holds nothing is reported, the run's exit code kept.
    await keepingProcessAlive(() =>
      withDeadline(`${what}.close()`, ms, close, {
        late: () => new Error(`closing did not finish within ${ms} ms`),
        onLateRejection: lateRejectionLine(emit),
      }),
    );
  } catch (error) {
    emit({ event: 'sweep_close_failed', closing: what, error: describe(error) });
  }
}

interface JobMode {
  config: JobConfig;
  signal: AbortSignal;
  stopTimeoutMs: number;
  emit: (obj: Record<string, unknown>) => void;
  logger: KitLogger | undefined;
}

async function runOnceMode<Tx>(kit: SweepJobKit<Tx>, mode: JobMode): Promise<number> {
  const { config, signal, stopTimeoutMs, emit, logger } = mode;
  const owner = newSweepOwner();
  // A run that throws at once (options it refuses) fails like one that rejects. A ready kit's
  // runSweep is the configuration's code: one that never settles fails the run once it is well
  // past its budget (the kit's own ends within it), never holds the job for good.
  const { timeBudgetMs } = config.sweep;
  const overrunMs =
    2 * (Number.isSafeInteger(timeBudgetMs) ? Number(timeBudgetMs) : DEFAULT_TIME_BUDGET_MS) + stopTimeoutMs;
  const run = withDeadline(
    'kit.runSweep()',
    overrunMs,
    () => kit.runSweep({ ...config.sweep, owner, signal, ...(logger ? { logger } : {}) }),
    {
      late: () =>
        new Error(
          `the run did not finish within ${overrunMs} ms (twice its time budget and the stop timeout): does the kit's runSweep wait on something that never answers?`,
        ),
      onLateRejection: lateRejectionLine(emit),
    },
  );
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
      const release = await releaseClaimsWithin(kit.store, owner, stopTimeoutMs, lateRejectionLine(emit));
      const lapsed = 'lapsed' in release;
      emit({
        event: 'sweep_stopped',
        reason: `in-flight reads did not finish within the stop timeout; ${lapsed ? CLAIMS_LAPSE : 'claims released'}`,
        ...(lapsed ? { error: describe(release.lapsed) } : {}),
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

async function runLoopMode<Tx>(kit: SweepJobKit<Tx>, mode: JobMode): Promise<number> {
  const { config, signal, stopTimeoutMs, emit, logger } = mode;
  if (signal.aborted) return SweepJobExitCode.Ok;
  try {
    const workerOptions: SweepWorkerOptions = {
      ...config.sweep,
      intervalMs: config.intervalMs,
      stopTimeoutMs,
      ...(logger ? { logger } : {}),
      onReport: (report) => emit(sweepLine(report, 'loop')),
      onError: (error) => emit({ event: 'sweep_failed', error: describe(error) }),
    };
    const worker = await startWorker(() => kit.startSweepWorker(workerOptions), stopTimeoutMs, lateRejectionLine(emit));
    // A signal may have come while an async start was awaited.
    if (!signal.aborted) {
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    }
    await stopWorker(worker, stopTimeoutMs, lateRejectionLine(emit));
    return SweepJobExitCode.Ok;
  } catch (error) {
    emit({ event: 'sweep_failed', error: describe(error) });
    return SweepJobExitCode.SweepFailed;
  }
}
