/**
 * The reusable body of the copyable sweep job (cron, a systemd timer, a Kubernetes CronJob).
 *
 *   --once                     one sweep, then exit
 *   --loop (default)           a sweep every --interval-seconds until SIGTERM/SIGINT (a second one
 *                              ends the process at once; its claims lapse with their lease)
 *   --interval-seconds N       pause between runs in loop mode (env SWEEP_INTERVAL_SECONDS; default 60)
 *   --batch-size N             attempts claimed per store call (env SWEEP_BATCH_SIZE; default 50)
 *   --concurrency N            status reads in flight (env SWEEP_CONCURRENCY; default 4)
 *   --time-budget-seconds N    a run's reading time: no read starts in its last half or its last fulfil timeout,
 *                              the shorter (env SWEEP_TIME_BUDGET_SECONDS; default 60)
 *   --lease-seconds N          claim lease (env SWEEP_LEASE_SECONDS; default 120)
 *   --max-reads-per-second N   status reads a second, all sweep processes together (env SWEEP_MAX_READS_PER_SECOND)
 *   --nice N                   CPU priority of the job's process, 0-19 (env SWEEP_NICE; default 10; 0 keeps it)
 *
 * Prints ONE JSON line per run: {"event":"sweep","claimed",..,"fulfilled",..,"failed",..,"pending",
 * ..,"expired",..,"errors",..,"durationMs",..}. Exit codes: 0 done (or stopped by a signal),
 * 1 configuration error, 2 the service could not be reached at all (reads were made and none got
 * a usable answer), 3 the sweep itself failed (e.g. the database). Never prints the client secret.
 *
 * What it takes and answers is sweep-job-options.ts, the kit it runs sweep-job-kit.ts, its two
 * modes sweep-job-modes.ts, its flags sweep-job-args.ts.
 */
import { keepingProcessAlive, runDetached, withDeadline } from '../deadline.ts';
import { environmentSecrets, redactSecretFragments } from '../errors.ts';
import { cutForPrinting, describeQuotingError, withoutUrlPasswords } from '../printable-errors.ts';
import { describeError as describe, markingErrors } from '../logger.ts';
import { yieldToRequests } from './cpu-priority.ts';
import { reportLostConnections } from './pool-errors.ts';
import {
  checkStopTimeout,
  DEFAULT_JOB_USAGE,
  parseJobConfig,
  type JobConfig,
  type SweepJobEnv,
} from './sweep-job-args.ts';
import { kitOf } from './sweep-job-kit.ts';
import { lateRejectionLine, runLoopMode, runOnceMode } from './sweep-job-modes.ts';
import { SweepJobExitCode, type SweepJobKit, type SweepJobOptions } from './sweep-job-options.ts';
import { stopSignal } from './stop-signal.ts';
import { unhandledErrorEvent, watchUnhandledErrors, type UnhandledErrorWatch } from './unhandled-errors.ts';

export {
  SweepJobExitCode,
  type SweepJobKit,
  type SweepJobOptions,
  type SweepJobSettings,
} from './sweep-job-options.ts';
export type { SweepJobEnv } from './sweep-job-args.ts';

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
      await closeWithin(stopTimeoutMs, 'kit', async () => markingErrors(() => kit.close()), emit);
      await closeWithin(stopTimeoutMs, 'store', async () => markingErrors(() => kit.store.close()), emit);
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
