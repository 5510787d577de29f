/**
 * The PostgreSQL store's fulfil path: "an action and its mark commit in one transaction keyed by
 * sessionId". The action receives the pool client inside BEGIN ... COMMIT. The mark is a
 * conditional UPDATE (a concurrent one waits for the first to commit, then finds nothing pending);
 * with ordering 'latest', an advisory lock per (user, action) is taken first, so newest-wins
 * cannot race. A group commit is one transaction for the whole group (fulfilBatch).
 */
import type { PoolClient } from 'pg';
import { fulfilOnceVia, inCallerOrder, inLockOrder } from './batch.ts';
import { recordEvent } from './postgres-outbox.ts';
import { inTransaction, queryOn, type PostgresDb } from './postgres-query.ts';
import { fromAttemptJson, type AttemptJsonRow } from './postgres-rows.ts';
import type { FulfilOnceOptions, FulfilOnceResult, FulfilRequest, FulfilSettlement, VerifyStore } from './types.ts';

type Fulfil = Pick<VerifyStore<PoolClient>, 'fulfilBatch' | 'fulfilOnce'>;

/** markFulfilled's rows: the attempt it marked, and the older ones it superseded. */
type RoleRow = AttemptJsonRow & { role: 'fulfilled' | 'superseded' };

/** One request of a group, on the group's transaction: fulfilOnce's decision. */
async function fulfilOne(client: PoolClient, request: FulfilRequest<PoolClient>): Promise<FulfilOnceResult> {
  const { sessionId, effect, now, options = {} } = request;
  const latest = (options.ordering ?? 'latest') === 'latest';
  // Mark first: a concurrent caller's UPDATE waits on this row, then finds it no longer pending.
  const { rows: marked } = await queryOn<RoleRow>(client, 'markFulfilled', [sessionId, now, latest]);
  const row = marked.find((r) => r.role === 'fulfilled');
  if (row === undefined) return notMarked(client, sessionId, now, options);
  const attempt = fromAttemptJson(row.attempt);
  const superseded = marked
    .filter((r) => r.role === 'superseded')
    .map((r) => fromAttemptJson(r.attempt))
    .sort((a, b) => a.startSeq - b.startSeq);
  // The action's writes go through the same client, inside the same transaction.
  await effect(client, attempt);
  const eventIds = await recordEvent(client, options.event, sessionId, 'fulfilled', now);
  for (const o of superseded) {
    eventIds.push(...(await recordEvent(client, options.event, o.sessionId, 'superseded', now)));
  }
  return { kind: 'fulfilled', attempt, superseded, eventIds };
}

/** Why the mark was refused: settled already, unknown, or a newer attempt was applied (then superseded). */
async function notMarked(
  client: PoolClient,
  sessionId: string,
  now: number,
  options: FulfilOnceOptions,
): Promise<FulfilOnceResult> {
  const { rows } = await queryOn<AttemptJsonRow>(client, 'bySession', [sessionId]);
  if (rows[0] === undefined) return { kind: 'not_pending', attempt: undefined };
  const current = fromAttemptJson(rows[0].attempt);
  if (current.outcome === 'fulfilled') return { kind: 'already_fulfilled', attempt: current };
  if (current.outcome !== 'pending') return { kind: 'not_pending', attempt: current };
  // Still pending, so the mark was refused: a newer attempt of this user and action was applied.
  const newer = await queryOn<{ session_id: string }>(client, 'newerFulfilled', [sessionId]);
  // Never undefined: the mark is refused only when a newer attempt is fulfilled.
  // eslint-disable-next-line @typescript-eslint/no-non-null-assertion
  const by = newer.rows[0]!.session_id;
  const superseded = await queryOn<AttemptJsonRow>(client, 'markSuperseded', [sessionId, by, now]);
  const eventIds = await recordEvent(client, options.event, sessionId, 'superseded', now);
  // Never undefined: under the intent lock the attempt read above is still pending.
  // eslint-disable-next-line @typescript-eslint/no-non-null-assertion
  return { kind: 'superseded', attempt: fromAttemptJson(superseded.rows[0]!.attempt), eventIds };
}

/** Takes the advisory locks of the requests' (user, action) pairs that are ordered 'latest'. */
async function lockIntents(client: PoolClient, requests: readonly FulfilRequest<PoolClient>[]): Promise<void> {
  const ordered = requests.filter((r) => (r.options?.ordering ?? 'latest') === 'latest').map((r) => r.sessionId);
  if (ordered.length > 0) await queryOn(client, 'lockIntents', [ordered]);
}

/** Every request of the group in ONE transaction, in lock order, no savepoint: any error rolls it all back. */
function fulfilTogether(db: PostgresDb, requests: readonly FulfilRequest<PoolClient>[]) {
  return inTransaction(db, async (client) => {
    await lockIntents(client, requests);
    const settled: { index: number; settlement: FulfilSettlement }[] = [];
    for (const { request, index } of inLockOrder(requests)) {
      settled.push({ index, settlement: { ok: true, result: await fulfilOne(client, request) } });
    }
    return inCallerOrder(settled);
  });
}

/** One request in its own transaction: its effect's error (or an aborted transaction) is its settlement. */
async function settleAlone(db: PostgresDb, request: FulfilRequest<PoolClient>): Promise<FulfilSettlement> {
  try {
    const [settlement] = await fulfilTogether(db, [request]);
    // Never undefined: a batch of one settles one request.
    // eslint-disable-next-line @typescript-eslint/no-non-null-assertion
    return settlement!;
  } catch (error) {
    return { ok: false, error };
  }
}

/**
 * Group commit in one transaction, without a savepoint per request (a savepoint is a round trip
 * and a subtransaction per attempt). When anything in the group fails (an effect threw, or
 * swallowed an SQL error and left the transaction aborted), nothing of it committed: each request
 * is then settled again in its own transaction, so "an effect that throws rolls back only its own
 * attempt". A batch of one rejects with its error, as fulfilOnce always did.
 */
async function fulfilBatch(
  db: PostgresDb,
  requests: readonly FulfilRequest<PoolClient>[],
): Promise<FulfilSettlement[]> {
  if (requests.length <= 1) return requests.length === 0 ? [] : fulfilTogether(db, requests);
  try {
    return await fulfilTogether(db, requests);
  } catch {
    const settlements: FulfilSettlement[] = [];
    // One at a time, in the caller's order: a retry is the rare path, and needs one connection.
    for (const request of requests) settlements.push(await settleAlone(db, request));
    return settlements;
  }
}

export function postgresFulfil(db: PostgresDb): Fulfil {
  const fulfilGroup = (requests: readonly FulfilRequest<PoolClient>[]) => fulfilBatch(db, requests);
  return { fulfilBatch: fulfilGroup, fulfilOnce: fulfilOnceVia<PoolClient>({ fulfilBatch: fulfilGroup }) };
}
