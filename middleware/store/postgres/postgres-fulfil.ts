/**
 * The PostgreSQL store's fulfil path: "an action and its mark commit in one transaction keyed by
 * sessionId". The action receives the pool client inside BEGIN ... COMMIT. The mark is a
 * conditional UPDATE (a concurrent one waits for the first to commit, then finds nothing pending);
 * with ordering 'latest', an advisory lock per (user, action) is taken first (by the first mark
 * itself, in a routine), so newest-wins cannot race. A group commit is one transaction for the
 * whole group (fulfilBatch).
 */
import type { PoolClient } from 'pg';
import { inCallerOrder, inLockOrder } from '../batch.ts';
import { recordEvent } from './postgres-outbox.ts';
import { inTransaction, queryOn, type PostgresDb } from './postgres-query.ts';
import { fromAttemptJson, type AttemptJsonRow } from './postgres-rows.ts';
import type {
  Attempt,
  FulfilOnceOptions,
  FulfilOnceResult,
  FulfilRequest,
  FulfilSettlement,
  VerifyStore,
} from '../types.ts';

type Fulfil = Pick<VerifyStore<PoolClient>, 'fulfilBatch'>;

/** markFulfilled's rows, by ord (a request's place in its round, from 1): marked, or superseded by it. */
interface MarkRow {
  role: 'fulfilled' | 'superseded';
  ord: number;
  attempt: string | null;
}

type Ordered = { request: FulfilRequest<PoolClient>; index: number };

/**
 * The group in rounds, each request in lock order: at most one request per user and action in a
 * round (user_ref and action never change once stored), so one statement never updates a row twice
 * and each pair is decided in lock order, as one at a time would.
 */
function inRounds(requests: readonly FulfilRequest<PoolClient>[]): Ordered[][] {
  const rounds: Ordered[][] = [];
  const perIntent = new Map<string, number>();
  for (const item of inLockOrder(requests)) {
    const intent = `${item.request.attempt.userRef}\u0000${item.request.attempt.action}`;
    const round = perIntent.get(intent) ?? 0;
    perIntent.set(intent, round + 1);
    (rounds[round] ??= []).push(item);
  }
  return rounds;
}

/** The (user, action) pairs of a group's requests ordered 'latest': its first round takes their locks. */
interface IntentLocks {
  users: string[];
  actions: string[];
}

/**
 * Marks a round's requests in one statement; returns each one's rows by its place in the round.
 * With `locks` (a group's first round), the statement takes the group's pair locks first.
 */
async function markRound(client: PoolClient, round: readonly Ordered[], locks?: IntentLocks): Promise<MarkRow[][]> {
  const requests = round.map(({ request }, k) => ({
    ord: k + 1,
    session_id: request.attempt.sessionId,
    latest: (request.options?.ordering ?? 'latest') === 'latest',
    now: request.now,
  }));
  const [only] = requests;
  const { rows } =
    locks !== undefined
      ? await queryOn<MarkRow>(client, 'markFulfilledGroupLocked', [
          JSON.stringify(requests),
          locks.users,
          locks.actions,
        ])
      : requests.length === 1 && only !== undefined
        ? await queryOn<MarkRow>(client, only.latest ? 'markFulfilled' : 'markFulfilledIndependent', [
            only.session_id,
            only.now,
          ])
        : await queryOn<MarkRow>(client, 'markFulfilledGroup', [JSON.stringify(requests)]);
  const byOrd: MarkRow[][] = round.map(() => []);
  for (const row of rows) byOrd[row.ord - 1]?.push(row);
  return byOrd;
}

/** One request after its round's mark, on the group's transaction: run its action, or say why not. */
async function settleMarked(
  client: PoolClient,
  request: FulfilRequest<PoolClient>,
  rows: readonly MarkRow[],
): Promise<FulfilOnceResult> {
  const { effect, now, options = {} } = request;
  const { sessionId } = request.attempt;
  if (!rows.some((r) => r.role === 'fulfilled')) return notMarked(client, sessionId, now, options);
  // The mark changed only these (and the lease): the caller's attempt need not be read back.
  const attempt: Attempt = { ...request.attempt, outcome: 'fulfilled', fulfilledAt: now, finishedAt: now };
  const superseded = rows
    .flatMap((r) => (r.role === 'superseded' && r.attempt !== null ? [fromAttemptJson(r.attempt)] : []))
    .sort((a, b) => a.startSeq - b.startSeq);
  // The action's writes go through the same client, inside the same transaction.
  await effect(client, attempt);
  const eventIds = await recordEvent(client, options.event, sessionId, 'fulfilled', now);
  for (const o of superseded) {
    eventIds.push(...(await recordEvent(client, options.event, o.sessionId, 'superseded', now)));
  }
  return { kind: 'fulfilled', attempt, superseded, eventIds };
}

/**
 * The group a round at a time (inRounds): one statement marks the round (a concurrent caller's
 * UPDATE waits on the marked rows, then finds them no longer pending), then each request runs its
 * action or learns why it was not marked.
 */
async function fulfilInRounds(client: PoolClient, requests: readonly FulfilRequest<PoolClient>[]) {
  const settled: { index: number; settlement: FulfilSettlement }[] = [];
  // A request alone takes its pair's lock in its mark (markFulfilled).
  let locks = requests.length > 1 ? intentLocks(requests) : undefined;
  for (const round of inRounds(requests)) {
    const marks = await markRound(client, round, locks);
    locks = undefined;
    for (const [k, { request, index }] of round.entries()) {
      const result = await settleMarked(client, request, marks[k] ?? []);
      settled.push({ index, settlement: { ok: true, result } });
    }
  }
  return inCallerOrder(settled);
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

/** The pairs of the requests ordered 'latest'; undefined when there are none (nothing to lock). */
function intentLocks(requests: readonly FulfilRequest<PoolClient>[]): IntentLocks | undefined {
  const ordered = requests.filter((r) => (r.options?.ordering ?? 'latest') === 'latest').map((r) => r.attempt);
  if (ordered.length === 0) return undefined;
  return { users: ordered.map((a) => a.userRef), actions: ordered.map((a) => a.action) };
}

/**
 * Every request of the group in ONE transaction, in lock order, no savepoint: any error rolls it all
 * back. Every pair's lock is taken by the first mark (markFulfilledGroupLocked, or markFulfilled
 * for a request alone), before anything is marked, one round trip fewer.
 */
function fulfilTogether(db: PostgresDb, requests: readonly FulfilRequest<PoolClient>[]) {
  return inTransaction(db, (client) => fulfilInRounds(client, requests));
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
 * attempt". A batch of one rejects with its error: its caller (onlySettlement) would throw it anyway.
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
  return { fulfilBatch: (requests) => fulfilBatch(db, requests) };
}
