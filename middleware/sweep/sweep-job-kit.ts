/** The kit a sweep job runs: the one given, or the one the integrator's factory builds within its deadline. */
import { keepingProcessAlive, runDetached, withDeadline, type LateRejectionReporter } from '../deadline.ts';
import { KitError, KitErrorCode } from '../errors.ts';
import { markingErrors } from '../logger.ts';
import { hasMethods } from '../options/option-problems.ts';
import type { JobConfig, SweepJobEnv } from './sweep-job-args.ts';
import type { SweepJobKit, SweepJobOptions } from './sweep-job-options.ts';
import { DEFAULT_SWEEP_CONCURRENCY } from './sweep-options.ts';

/**
 * The kit the options name: given, or built by the factory (then the job owns it). The factory is
 * the integrator's code: one that has not built the kit within `ms` fails as a configuration error.
 */
export async function kitOf<Tx>(
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
  // The configuration's code: a KitError it throws may name a number, logged masked as its others.
  const building = Promise.resolve().then(() => markingErrors(() => factory(env, settings)));
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
