/**
 * The kit's store as a request calls it (the start, the landing, the mobile completion). The store
 * is the integrator's code, outside the kit's trust for liveness: a store of the app's own, or a
 * pg Pool with no free connection, may never answer, and the user's request would stay open for
 * good. Each call is waited on for `hookTimeouts.store` at most, then the request is answered 503
 * `store_unavailable`; what the call does later is the store's (a late write may still apply, and
 * the landing's reload or the sweep then reads it). A fulfilment's transaction runs the action's
 * fulfil under its own deadline first, so it gets `hookTimeouts.fulfil` on top. The step-up and
 * SMS pumping stores keep their own deadlines, and the sweep bounds its calls by its time budget.
 */
import type { KitContext } from '../context.ts';
import { withStoreDeadline } from '../deadline.ts';
import { lateRejectionLogger, markingErrors } from '../logger.ts';
import { callsThrough } from '../store/calls-through.ts';
import type { VerifyStore } from '../store/types.ts';

/** The context the request routes run on: the same, but for the store's deadlines. */
export function withStoreDeadlines<Tx>(context: KitContext<Tx>): KitContext<Tx> {
  return { ...context, store: boundedStore(context) };
}

function boundedStore<Tx>(context: KitContext<Tx>): VerifyStore<Tx> {
  const { store, hookTimeouts } = context;
  const onLateRejection = lateRejectionLogger(context.logger);
  // The step-up and SMS pumping stores are bounded where they are called.
  return callsThrough(
    store,
    (method, call) => {
      const ms = method === 'fulfilBatch' ? hookTimeouts.store + hookTimeouts.fulfil : hookTimeouts.store;
      // A KitError of a store of the app's own is in its words (it may name the number): logged masked.
      return withStoreDeadline(`store.${method}`, ms, () => markingErrors(call), onLateRejection);
    },
    { nested: 'as-is' },
  );
}
