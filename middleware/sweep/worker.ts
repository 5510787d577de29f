/**
 * The in-process sweep worker: runs `runSweep` on an interval, one run at a time.
 *
 * `stop()` stops claiming at once, lets in-flight status reads finish (up to `stopTimeoutMs`),
 * then releases every claim this worker still holds so another worker can take them right away
 * (waiting as long again for the store; claims it did not take back lapse with their lease).
 * It is awaitable and idempotent (every call returns the same promise). Timers are unref'd, so
 * the worker never keeps a process alive by itself; errors in a run are logged, never thrown.
 */
import { describeError as describe, lateRejectionLogger, safeLogger, type KitLogger } from '../logger.ts';
import { runDetached, withDeadline, type LateRejectionReporter } from '../deadline.ts';
import { runSweep } from './sweep.ts';
import type { SweepDeps, SweepReport } from './sweep-report.ts';
import { resolveWorkerOptions, type ResolvedWorkerOptions, type SweepWorkerOptions } from './sweep-options.ts';

/** A running sweep worker (`kit.startSweepWorker`). */
export interface SweepWorker {
  /** The owner id this worker claims with. */
  readonly owner: string;
  /** True while a run is in progress. */
  readonly running: boolean;
  /** Completed runs so far. */
  readonly runs: number;
  /** The last completed run's report, if any. */
  readonly lastReport: SweepReport | undefined;
  /** Stops the worker; resolves when claims are released (or left to lapse). Safe to call more than once (same promise). */
  stop(): Promise<void>;
}

/** Runs one sweep, records its report, and hands it (or the failure) to the hooks; never throws. */
async function runAndReport<Tx>(
  deps: SweepDeps<Tx>,
  options: ResolvedWorkerOptions,
  signal: AbortSignal,
  logger: KitLogger | undefined,
  record: (report: SweepReport) => void,
): Promise<void> {
  try {
    const report = await runSweep(deps, { ...options.sweep, signal });
    // runSweep logs the run's line.
    record(report);
    // Not awaited (a hung hook never stalls the worker); a throw or a rejection is only logged.
    runDetached(
      () => options.onReport?.(report),
      (error) => logger?.error({ err: describe(error) }, 'sweep worker: onReport failed'),
    );
  } catch (error) {
    logger?.error({ err: describe(error) }, 'sweep run failed; the worker tries again at the next interval');
    runDetached(
      () => options.onError?.(error),
      (hookError) => logger?.error({ err: describe(hookError) }, 'sweep worker: onError failed'),
    );
  }
}

/** What a stop says when the store did not take the claims back: nothing is lost, another claim reads them later. */
export const CLAIMS_LAPSE = 'could not release claims; they lapse with the lease';

/**
 * Hands the owner's claims back so another worker may take them at once. The store is the
 * integrator's, outside the kit's trust for liveness: a release that fails, or has not settled
 * within `ms`, never holds a stop; it resolves with that failure and the claims lapse instead. Its
 * rejection after the deadline goes to `onLateRejection`.
 */
export async function releaseClaimsWithin(
  store: { releaseClaims(owner: string): Promise<number> },
  owner: string,
  ms: number,
  onLateRejection?: LateRejectionReporter,
): Promise<{ released: number } | { lapsed: unknown }> {
  try {
    const late = () => new Error(`releaseClaims did not settle within ${ms} ms`);
    const releasing = withDeadline('releaseClaims', ms, () => store.releaseClaims(owner), { late, onLateRejection });
    return { released: await releasing };
  } catch (error) {
    return { lapsed: error };
  }
}

/** Waits for the run in flight (at most `stopTimeoutMs`), then releases the worker's claims (as long again). */
async function finishAndRelease<Tx>(
  deps: SweepDeps<Tx>,
  options: ResolvedWorkerOptions,
  inFlight: Promise<void> | undefined,
  logger: KitLogger | undefined,
): Promise<void> {
  const { owner } = options.sweep;
  const { stopTimeoutMs } = options;
  if (inFlight !== undefined) {
    let waitTimer: NodeJS.Timeout | undefined;
    const finished = await Promise.race([
      inFlight.then(() => true),
      new Promise<boolean>((resolve) => {
        waitTimer = setTimeout(() => resolve(false), stopTimeoutMs);
      }),
    ]);
    clearTimeout(waitTimer);
    if (!finished) {
      logger?.warn(
        { owner, stopTimeoutMs },
        'sweep worker: in-flight checks did not finish in time; releasing their claims',
      );
    }
  }
  const release = await releaseClaimsWithin(deps.store, owner, stopTimeoutMs, logger && lateRejectionLogger(logger));
  if ('lapsed' in release) logger?.error({ err: describe(release.lapsed) }, `sweep worker: ${CLAIMS_LAPSE}`);
  else if (release.released > 0) logger?.info({ owner, released: release.released }, 'sweep worker: released claims');
}

/** Starts the worker: a run now (or after `initialDelayMs`), then one `intervalMs` after each run ends. */
export function startSweepWorker<Tx>(deps: SweepDeps<Tx>, options: SweepWorkerOptions): SweepWorker {
  const resolved = resolveWorkerOptions(options);
  const logger = safeLogger(resolved.sweep.logger ?? deps.logger);
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> | undefined;
  let stopping: Promise<void> | undefined;
  let runs = 0;
  let lastReport: SweepReport | undefined;

  const schedule = (delayMs: number) => {
    if (abort.signal.aborted) return;
    timer = setTimeout(tick, delayMs);
    timer.unref();
  };
  function tick(): void {
    timer = undefined;
    if (abort.signal.aborted || current !== undefined) return;
    const record = (report: SweepReport) => {
      runs++;
      lastReport = report;
    };
    current = runAndReport(deps, resolved, abort.signal, logger, record).finally(() => {
      current = undefined;
      schedule(resolved.intervalMs);
    });
  }
  schedule(resolved.initialDelayMs);

  return {
    owner: resolved.sweep.owner,
    get running() {
      return current !== undefined;
    },
    get runs() {
      return runs;
    },
    get lastReport() {
      return lastReport;
    },
    stop() {
      stopping ??= (async () => {
        abort.abort();
        if (timer !== undefined) clearTimeout(timer);
        timer = undefined;
        await finishAndRelease(deps, resolved, current, logger);
      })();
      return stopping;
    },
  };
}
