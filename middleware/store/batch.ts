/**
 * What both stores share around group commit: a fulfilment alone is fulfilBatch with a batch of
 * one, so there is one fulfil path in each store, not a single and a batched copy.
 */
import type { FulfilOnceResult, FulfilSettlement } from './types.ts';

/**
 * The i-th request's settlement as fulfilBatch answered it, or why there is none: a store of the
 * app's own may answer anything (an async fulfilBatch that forgot its return), and that must fail
 * the requests, never throw where nothing catches it.
 */
export function settlementAt(settlements: unknown, i: number): FulfilSettlement | Error {
  if (!Array.isArray(settlements)) return new Error('fulfilBatch returned no list of results');
  const settlement: unknown = settlements[i];
  if (typeof settlement !== 'object' || settlement === null) return new Error('fulfilBatch returned too few results');
  return settlement as FulfilSettlement;
}

/** The result of a batch of one: its result, or the error its effect threw. */
export function onlySettlement(settlements: unknown): FulfilOnceResult {
  const settlement = settlementAt(settlements, 0);
  if (settlement instanceof Error) throw settlement;
  if (!settlement.ok) throw settlement.error;
  return settlement.result;
}

/**
 * A group's requests in the order both stores work through them: by sessionId, so two processes
 * committing overlapping groups take the attempts' row locks in the same order (PostgreSQL) and
 * queue instead of deadlocking. Each keeps its place in the caller's order (see inCallerOrder).
 */
export function inLockOrder<Request extends { attempt: { sessionId: string } }>(
  requests: readonly Request[],
): { request: Request; index: number }[] {
  const bySessionId = (a: { request: Request; index: number }, b: { request: Request; index: number }) => {
    const [x, y] = [a.request.attempt.sessionId, b.request.attempt.sessionId];
    return x < y ? -1 : x > y ? 1 : a.index - b.index;
  };
  return requests.map((request, index) => ({ request, index })).sort(bySessionId);
}

/** Settlements computed in lock order, put back in the caller's order. */
export function inCallerOrder<T>(settled: readonly { index: number; settlement: T }[]): T[] {
  return [...settled].sort((a, b) => a.index - b.index).map((s) => s.settlement);
}
