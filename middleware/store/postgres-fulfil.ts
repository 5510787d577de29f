/**
 * The PostgreSQL store's fulfil path: "an action and its mark commit in one transaction keyed by
 * sessionId". The action receives the pool client inside BEGIN ... COMMIT. The mark is a
 * conditional UPDATE (a concurrent one waits for the first to commit, then finds nothing pending);
 * with ordering 'latest', an advisory lock per (user, action) is taken first, so newest-wins
 * cannot race. A group commit is one transaction with a savepoint per attempt.
 */
import type { PoolClient } from 'pg';
import { fulfilOnceVia, inCallerOrder, inLockOrder } from './batch.ts';
import { recordEvent } from './postgres-outbox.ts';
import { ABORTED, IN_FAILED_TRANSACTION, inTransaction, queryOn, type PostgresDb } from './postgres-query.ts';
import { toAttempt, type AttemptRow } from './postgres-rows.ts';
import type { FulfilOnceOptions, FulfilOnceResult, FulfilRequest, FulfilSettlement, VerifyStore } from './types.ts';

type Fulfil = Pick<VerifyStore<PoolClient>, 'fulfilBatch' | 'fulfilOnce'>;

/** markFulfilled's rows: the attempt it marked, and the older ones it superseded. */
type RoleRow = AttemptRow & { role: 'fulfilled' | 'superseded' };

/** One request of a group, on the group's transaction: fulfilOnce's decision. */
async function fulfilOne(client: PoolClient, request: FulfilRequest<PoolClient>): Promise<FulfilOnceResult> {
  const { effect, now, options = {} } = request;
  const { sessionId } = request.attempt;
  const latest = (options.ordering ?? 'latest') === 'latest';
  // Mark first: a concurrent caller's UPDATE waits on this row, then finds it no longer pending.
  const { rows: marked } = await queryOn<RoleRow>(client, 'markFulfilled', [sessionId, now, latest]);
  const row = marked.find((r) => r.role === 'fulfilled');
  if (row === undefined) return notMarked(client, sessionId, now, options);
  const attempt = toAttempt(row);
  const superseded = marked
    .filter((r) => r.role === 'superseded')
    .map(toAttempt)
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
  const { rows } = await queryOn<AttemptRow>(client, 'bySession', [sessionId]);
  if (rows[0] === undefined) return { kind: 'not_pending', attempt: undefined };
  const current = toAttempt(rows[0]);
  if (current.outcome === 'fulfilled') return { kind: 'already_fulfilled', attempt: current };
  if (current.outcome !== 'pending') return { kind: 'not_pending', attempt: current };
  // Still pending, so the mark was refused: a newer attempt of this user and action was applied.
  const newer = await queryOn<{ session_id: string }>(client, 'newerFulfilled', [sessionId]);
  // Never undefined: the mark is refused only when a newer attempt is fulfilled.
  // eslint-disable-next-line @typescript-eslint/no-non-null-assertion
  const by = newer.rows[0]!.session_id;
  const superseded = await queryOn<AttemptRow>(client, 'markSuperseded', [sessionId, by, now]);
  const eventIds = await recordEvent(client, options.event, sessionId, 'superseded', now);
  // Never undefined: under the intent lock the attempt read above is still pending.
  // eslint-disable-next-line @typescript-eslint/no-non-null-assertion
  return { kind: 'superseded', attempt: toAttempt(superseded.rows[0]!), eventIds };
}

/** Takes the advisory locks of the requests' (user, action) pairs that are ordered 'latest'. */
async function lockIntents(client: PoolClient, requests: readonly FulfilRequest<PoolClient>[]): Promise<void> {
  const ordered = requests
    .filter((r) => (r.options?.ordering ?? 'latest') === 'latest')
    .map((r) => r.attempt.sessionId);
  if (ordered.length > 0) await queryOn(client, 'lockIntents', [ordered]);
}

/**
 * A group of several, in lock order, each request in its own savepoint, so a throwing effect (or
 * one that swallowed an SQL error and left the transaction aborted) rolls back only its own attempt.
 */
async function settleEach(client: PoolClient, requests: readonly FulfilRequest<PoolClient>[]) {
  const order = inLockOrder(requests);
  const settled: { index: number; settlement: FulfilSettlement }[] = [];
  await client.query('SAVEPOINT verify_kit_fulfil');
  for (const [k, { request, index }] of order.entries()) {
    // The next request's savepoint in the same round trip that ends this one's (the last one's ends at COMMIT).
    const next = k + 1 < order.length ? 'SAVEPOINT verify_kit_fulfil' : '';
    try {
      const result = await fulfilOne(client, request);
      // RELEASE fails here when the action swallowed an SQL error: then it is rolled back like a throw.
      await client.query(`RELEASE SAVEPOINT verify_kit_fulfil; ${next}`);
      settled.push({ index, settlement: { ok: true, result } });
    } catch (error) {
      await client.query(`ROLLBACK TO SAVEPOINT verify_kit_fulfil; RELEASE SAVEPOINT verify_kit_fulfil; ${next}`);
      const aborted = (error as { code?: string }).code === IN_FAILED_TRANSACTION;
      settled.push({ index, settlement: { ok: false, error: aborted ? new Error(ABORTED, { cause: error }) : error } });
    }
  }
  return inCallerOrder(settled);
}

/**
 * Group commit in one transaction. A batch of one needs no savepoint: its error rolls back the
 * whole transaction and rejects, as fulfilOnce always did. A larger group settles each request
 * in its own savepoint (settleEach).
 */
async function fulfilBatch(
  db: PostgresDb,
  requests: readonly FulfilRequest<PoolClient>[],
): Promise<FulfilSettlement[]> {
  const [only] = requests;
  if (only === undefined) return [];
  if (requests.length === 1) {
    const result = await inTransaction(db, async (client) => {
      await lockIntents(client, requests);
      return fulfilOne(client, only);
    });
    return [{ ok: true, result }];
  }
  return inTransaction(db, async (client) => {
    await lockIntents(client, requests);
    return settleEach(client, requests);
  });
}

export function postgresFulfil(db: PostgresDb): Fulfil {
  const fulfilGroup = (requests: readonly FulfilRequest<PoolClient>[]) => fulfilBatch(db, requests);
  return { fulfilBatch: fulfilGroup, fulfilOnce: fulfilOnceVia<PoolClient>({ fulfilBatch: fulfilGroup }) };
}
