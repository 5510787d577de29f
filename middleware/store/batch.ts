/**
 * What both stores share around group commit: fulfilOnce is fulfilBatch with a batch of one, so
 * there is one fulfil path in each store, not a single and a batched copy.
 */
import type { FulfilEffect, FulfilOnceOptions, FulfilOnceResult, FulfilSettlement, VerifyStore } from './types.ts';

/** The result of a batch of one: its result, or the error its effect threw. */
export function onlySettlement(settlements: readonly FulfilSettlement[]): FulfilOnceResult {
  const [settlement] = settlements;
  if (settlement === undefined) throw new Error('fulfilBatch returned no result for a batch of one');
  if (!settlement.ok) throw settlement.error;
  return settlement.result;
}

/** fulfilOnce through fulfilBatch. */
export function fulfilOnceVia<Tx>(store: Pick<VerifyStore<Tx>, 'fulfilBatch'>) {
  return async (
    sessionId: string,
    effect: FulfilEffect<Tx>,
    now: number,
    options: FulfilOnceOptions = {},
  ): Promise<FulfilOnceResult> => onlySettlement(await store.fulfilBatch([{ sessionId, effect, now, options }]));
}
