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

/**
 * A group's requests in the order both stores work through them: by sessionId, so two processes
 * committing overlapping groups take the attempts' row locks in the same order (PostgreSQL) and
 * queue instead of deadlocking. Settlements still come back in the caller's order (see inCallerOrder).
 */
export function inLockOrder<Request extends { sessionId: string }>(requests: readonly Request[]): number[] {
  return requests
    .map((_, i) => i)
    .sort((a, b) =>
      requests[a]!.sessionId < requests[b]!.sessionId
        ? -1
        : requests[a]!.sessionId > requests[b]!.sessionId
          ? 1
          : a - b,
    );
}

/** Settlements computed in `order` put back in the caller's order. */
export function inCallerOrder<T>(order: readonly number[], settled: readonly T[]): T[] {
  const out = new Array<T>(settled.length);
  order.forEach((index, k) => {
    out[index] = settled[k]!;
  });
  return out;
}
