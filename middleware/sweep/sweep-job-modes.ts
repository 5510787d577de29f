/**
 * The sweep job's two modes once its kit is in hand: one run (`--once`), or the kit's worker until a
 * stop (`--loop`); and the lines they print.
 */
import { withDeadline, type LateRejectionReporter } from '../deadline.ts';
import { describeError as describe, markingErrors, type KitLogger } from '../logger.ts';
import { startWorker, stopWorker } from './job-worker.ts';
import type { JobConfig } from './sweep-job-args.ts';
import { SweepJobExitCode, type SweepJobKit } from './sweep-job-options.ts';
import { DEFAULT_TIME_BUDGET_MS, newSweepOwner, type SweepWorkerOptions } from './sweep-options.ts';
import type { SweepReport } from './sweep-report.ts';
import { CLAIMS_LAPSE, releaseClaimsWithin } from './worker.ts';

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
    unfulfillable: report.unfulfillable,
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
 * An integrator's call (the kit factory, a close, the release of claims, a ready kit's runSweep or
 * stop) that rejected after the job's deadline for it, whose line could only say it was late: its
 * reason in a line of its own, once.
 */
export function lateRejectionLine(emit: (obj: Record<string, unknown>) => void): LateRejectionReporter {
  return (call, error) => emit({ event: 'sweep_late_rejection', call, error: describe(error) });
}

export interface JobMode {
  config: JobConfig;
  signal: AbortSignal;
  stopTimeoutMs: number;
  emit: (obj: Record<string, unknown>) => void;
  logger: KitLogger | undefined;
}

export async function runOnceMode<Tx>(kit: SweepJobKit<Tx>, mode: JobMode): Promise<number> {
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
    // The configuration's code: a KitError it throws may name a number, logged masked as its others.
    () => markingErrors(() => kit.runSweep({ ...config.sweep, owner, signal, ...(logger ? { logger } : {}) })),
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
    // A ready kit's runSweep is the configuration's code: an answer that is no report is a failed
    // run, never "the service could not be reached" (2) nor a run that went well (0).
    if (typeof (outcome as Partial<SweepReport> | null)?.serviceReachable !== 'boolean') {
      throw new Error(
        "kit.runSweep() answered no sweep report (it has no `serviceReachable`): is the kit's runSweep the kit's own?",
      );
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

export async function runLoopMode<Tx>(kit: SweepJobKit<Tx>, mode: JobMode): Promise<number> {
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
    const worker = await startWorker(
      () => markingErrors(() => kit.startSweepWorker(workerOptions)),
      stopTimeoutMs,
      lateRejectionLine(emit),
    );
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
