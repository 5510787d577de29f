/**
 * The sweep job's worker in loop mode: started and stopped through the kit it was given, which may
 * be hand-written (the configuration's code), so each call is awaited at most for a deadline.
 */
import { runDetached, withDeadline, type LateRejectionReporter } from '../deadline.ts';
import { KitError, KitErrorCode } from '../errors.ts';
import { hasMethods } from '../options/option-problems.ts';
import type { SweepWorker } from './worker.ts';

/**
 * The worker `start` gives. A hand-written kit's startSweepWorker may be async: its promise is
 * awaited, at most `ms` (a worker that comes later is stopped when it does). What it gives must be a
 * worker: taken for one, anything else would sweep nothing and fail only at the stop signal.
 */
export async function startWorker(
  start: () => unknown,
  ms: number,
  onLateRejection: LateRejectionReporter,
): Promise<SweepWorker> {
  const starting = Promise.resolve().then(start);
  let worker: unknown;
  try {
    worker = await withDeadline('kit.startSweepWorker()', ms, () => starting, {
      late: () => new Error(`kit.startSweepWorker() did not give its worker within ${ms} ms`),
      onLateRejection,
    });
  } catch (error) {
    runDetached(
      () => starting.then((late) => (isWorker(late) ? late.stop() : undefined)),
      () => undefined,
    );
    throw error;
  }
  if (isWorker(worker)) return worker;
  throw new KitError(
    KitErrorCode.InvalidOptions,
    'kit.startSweepWorker() gave something that is not a sweep worker (no stop): return the worker ' +
      '(or a promise of it) as createVerificationKit(...).startSweepWorker does.',
  );
}

function isWorker(value: unknown): value is SweepWorker {
  return hasMethods(value, ['stop']);
}

/**
 * Stops the worker. A ready kit's worker is the configuration's code: a stop that never settles must
 * not hold the job after its stop signal (the kit's own waits for its run, then releases claims, each
 * at most `stopTimeoutMs`).
 */
export async function stopWorker(
  worker: SweepWorker,
  stopTimeoutMs: number,
  onLateRejection: LateRejectionReporter,
): Promise<void> {
  const stopMs = 3 * stopTimeoutMs;
  await withDeadline('worker.stop()', stopMs, () => worker.stop(), {
    late: () => new Error(`the worker did not stop within ${stopMs} ms`),
    onLateRejection,
  });
}
