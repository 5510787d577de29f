/**
 * The integrator's request hooks (resolveUser, prepare, beforeCreate, the start limits, csrfCheck,
 * defaultCountry, bindTo) under their deadlines in `hookTimeouts`, with the kit's logger told why
 * one that missed its deadline rejected later: the user was answered `hook_failed` at the
 * deadline, and that message alone never says what went wrong.
 */
import type { KitContext } from '../context.ts';
import { withDeadline, type HookName } from '../deadline.ts';
import { lateRejectionLogger, markingErrors } from '../logger.ts';

export function withHookDeadline<T>(
  context: Pick<KitContext, 'hookTimeouts' | 'logger'>,
  name: HookName,
  hook: () => T | PromiseLike<T>,
): Promise<Awaited<T>> {
  // A KitError a hook throws is in the integrator's words: logged masked, as its other errors are
  // (the start limits' own refusal, from createStartLimits, is marked as the kit's: logged as written).
  return withDeadline(name, context.hookTimeouts[name], () => markingErrors(hook), {
    onLateRejection: lateRejectionLogger(context.logger),
  });
}
