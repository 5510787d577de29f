/**
 * How an action's `fulfil` is called inside the store's transaction. On PostgreSQL a promise it
 * returns is awaited under its deadline. On SQLite the transaction is synchronous: whatever a
 * returned promise does later runs after the rollback, outside any transaction, and it would do
 * so again at every retry (each reload, each sweep run, the sweep's group commit once more). So
 * such a fulfil is refused at its first call and never called again by this process.
 */
import { boundIfAsync, isThenable, type LateRejectionReporter } from '../deadline.ts';
import { KitError, KitErrorCode } from '../errors.ts';
import { markingErrors } from '../logger.ts';
import type { ActionDefinition, VerifiedAttempt } from '../types.ts';

/** The fulfil functions that returned a promise inside a synchronous transaction. */
const refusedOnSynchronousStores = new WeakSet<object>();

function refusal(action: string): KitError {
  return new KitError(
    KitErrorCode.InvalidOptions,
    `Action "${action}": fulfil must be synchronous (it runs inside the kit's SQLite transaction); it returned a ` +
      'promise, so nothing was marked and it is not called again by this process. Make it synchronous and restart.',
  );
}

export interface FulfilCall {
  /** The store's transaction is synchronous (SQLite): a promise cannot be awaited inside it. */
  synchronous: boolean;
  /** How long an async fulfil may take (hookTimeouts.fulfil). */
  deadlineMs: number;
  /** Told why an async fulfil rejected after its deadline. */
  onLateRejection?: LateRejectionReporter | undefined;
}

/** Calls `action.fulfil`; its result (a promise only where the store awaits one), or a throw. */
export function callFulfil<Tx>(
  action: ActionDefinition<Tx>,
  tx: Tx,
  attempt: VerifiedAttempt,
  { synchronous, deadlineMs, onLateRejection }: FulfilCall,
): unknown {
  // A KitError it throws is in the integrator's words (it may name the number): logged masked.
  const fulfil = () => markingErrors(() => action.fulfil(tx, attempt));
  if (!synchronous) return boundIfAsync('fulfil', deadlineMs, fulfil(), onLateRejection);
  if (refusedOnSynchronousStores.has(action.fulfil)) throw refusal(action.name);
  const result = fulfil();
  if (!isThenable(result)) return result;
  refusedOnSynchronousStores.add(action.fulfil);
  // Its rejection, later, is nobody's to handle: never an unhandled rejection.
  Promise.resolve(result).catch(() => undefined);
  throw refusal(action.name);
}
