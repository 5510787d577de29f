/**
 * The integrator's request hooks (resolveUser, prepare, beforeCreate, the start limits, csrfCheck,
 * defaultCountry, bindTo) under their deadlines in `hookTimeouts`, with the kit's logger told why
 * one that missed its deadline rejected later: the user was answered `hook_failed` at the
 * deadline, and that message alone never says what went wrong.
 */
import type { KitContext } from '../context.ts';
import { isThenable, withDeadline, type HookName } from '../deadline.ts';
import { lateRejectionLogger, thrownByIntegratorCode } from '../logger.ts';

export function withHookDeadline<T>(
  context: Pick<KitContext, 'hookTimeouts' | 'logger'>,
  name: HookName,
  hook: () => T | PromiseLike<T>,
): Promise<Awaited<T>> {
  // A KitError a hook throws is in the integrator's words: logged masked, as its other errors are.
  // Not the start limits': the kit's own refuse a start in its words, with a count of seconds.
  const marked = name === 'limits' ? hook : () => markingErrors(hook);
  return withDeadline(name, context.hookTimeouts[name], marked, {
    onLateRejection: lateRejectionLogger(context.logger),
  });
}

function markingErrors<T>(hook: () => T | PromiseLike<T>): T | PromiseLike<T> {
  let result: T | PromiseLike<T>;
  try {
    result = hook();
  } catch (error) {
    throw thrownByIntegratorCode(error);
  }
  if (!isThenable(result)) return result;
  return Promise.resolve(result).catch((error: unknown) => {
    throw thrownByIntegratorCode(error);
  });
}
