/**
 * The step-up store as a user's request calls it: a guarded route, the step-up page, a scope's
 * start and the landing's grant. The store is the integrator's code (a store of the app's own, or a
 * pg Pool with no free connection), outside the kit's trust for liveness: each call is waited on for
 * `hookTimeouts.store` at most, then the request is answered 503 `store_unavailable`, as the other
 * store calls of a request are. What the call does later is the store's: a kept request or a grant
 * written late is read by the next request, and the landing's reload writes the grant again; a
 * kept form consumed late is used up without running (its confirmation then answers 409).
 */
import { withStoreDeadline, type HookTimeouts } from '../deadline.ts';
import { lateRejectionLogger, markingErrors, type KitLogger } from '../logger.ts';
import { callsThrough } from '../store/calls-through.ts';
import type { StepUpStore } from '../store/types.ts';

/** One bounded store per store and kit: every guard of a kit calls the same one, as intent-limit remembers by it. */
const made = new WeakMap<StepUpStore, WeakMap<object, StepUpStore>>();

export function boundedStepUp(
  stepUp: StepUpStore,
  deps: { hookTimeouts: Pick<HookTimeouts, 'store'>; logger: KitLogger },
): StepUpStore {
  const ofStore = made.get(stepUp) ?? new WeakMap<object, StepUpStore>();
  made.set(stepUp, ofStore);
  const known = ofStore.get(deps);
  if (known !== undefined) return known;
  const ms = deps.hookTimeouts.store;
  const onLateRejection = lateRejectionLogger(deps.logger);
  const bounded = callsThrough(
    stepUp,
    (name, call) => withStoreDeadline(name, ms, () => markingErrors(call), onLateRejection),
    {
      prefix: 'stepUp.',
    },
  );
  ofStore.set(deps, bounded);
  return bounded;
}
