/**
 * The SQLite store's fulfil path: "an action and its mark commit in one transaction keyed by
 * sessionId". A batch of one is one IMMEDIATE transaction. A larger group commit is one IMMEDIATE
 * transaction; when one of its actions throws, the group is rolled back and committed again with a
 * savepoint per attempt, so a throwing action rolls back that attempt only.
 */
import type { Database } from 'better-sqlite3';
import { KitError, KitErrorCode } from '../../errors.ts';
import { inCallerOrder, inLockOrder } from '../batch.ts';
import { recordEvent } from './sqlite-outbox.ts';
import { toAttempt, type AttemptRow } from './sqlite-rows.ts';
import type { Statements } from './sqlite-sql.ts';
import type {
  Attempt,
  FulfilOnceOptions,
  FulfilOnceResult,
  FulfilRequest,
  FulfilSettlement,
  VerifyStore,
} from '../types.ts';

type Fulfil = Pick<VerifyStore<Database>, 'fulfilBatch'>;

/** One attempt: mark it, run the action, write its events, settle the user's older attempts of the action. */
function fulfilOne(db: Database, statements: Statements, request: FulfilRequest<Database>): FulfilOnceResult {
  const { effect, now, options = {} } = request;
  const { sessionId } = request.attempt;
  const latest = (options.ordering ?? 'latest') === 'latest';
  // Mark first (one statement decides who wins), then run the effect: both commit or neither.
  const marked = statements.markFulfilled.run({ sessionId, now, latest: latest ? 1 : 0 }).changes === 1;
  if (!marked) return notMarked(statements, sessionId, now, options);
  const attempt: Attempt = { ...request.attempt, outcome: 'fulfilled', fulfilledAt: now, finishedAt: now };
  const returned: unknown = effect(db, attempt);
  if (returned instanceof Promise) {
    // The effect would finish after COMMIT, outside the transaction: refuse and roll back.
    returned.catch(() => {});
    throw new KitError(
      KitErrorCode.InvalidOptions,
      `Action "${attempt.action}": fulfil must be synchronous (it runs inside the kit's SQLite transaction); do not return a Promise.`,
    );
  }
  const eventIds = recordEvent(statements, options.event, sessionId, 'fulfilled', now);
  // Older attempts still pending can never apply after this one: settle them now.
  // Named fields, not a spread of a fresh object plus keys: on Node 20 that garbage outlives young
  // collections, so the sweep's old generation (and peak RSS) would grow with the attempts it fulfils.
  const { userRef, action, startSeq } = attempt;
  const superseded = latest ? supersedeOlder(statements, { userRef, action, startSeq, by: sessionId, now }) : [];
  for (const settled of superseded) {
    eventIds.push(...recordEvent(statements, options.event, settled.sessionId, 'superseded', now));
  }
  return { kind: 'fulfilled', attempt, superseded, eventIds };
}

/** Marks the user's pending attempts of the action started before `startSeq` superseded; returns them. */
function supersedeOlder(
  statements: Statements,
  older: { userRef: string; action: string; startSeq: number; by: string; now: number },
): Attempt[] {
  const { userRef, action, startSeq } = older;
  const found = (statements.hasOlderPending.get({ userRef, action, startSeq }) as { found: number }).found === 1;
  return found ? (statements.supersedeOlder.all(older) as AttemptRow[]).map(toAttempt) : [];
}

/** Why the mark was refused: settled already, unknown, or a newer attempt was applied (then superseded). */
function notMarked(
  statements: Statements,
  sessionId: string,
  now: number,
  options: FulfilOnceOptions,
): FulfilOnceResult {
  const current = statements.bySession.get(sessionId) as AttemptRow | undefined;
  if (current === undefined) return { kind: 'not_pending', attempt: undefined };
  if (current.outcome === 'fulfilled') return { kind: 'already_fulfilled', attempt: toAttempt(current) };
  if (current.outcome !== 'pending') return { kind: 'not_pending', attempt: toAttempt(current) };
  const intent = { userRef: current.user_ref, action: current.action, startSeq: current.start_seq };
  const newer = statements.newerFulfilled.get(intent) as { session_id: string };
  const row = statements.markSuperseded.get({ sessionId, by: newer.session_id, now }) as AttemptRow;
  const eventIds = recordEvent(statements, options.event, sessionId, 'superseded', now);
  return { kind: 'superseded', attempt: toAttempt(row), eventIds };
}

/** Each request of a group, in lock order; the settlements in the caller's order. */
function settleEach(
  requests: readonly FulfilRequest<Database>[],
  settle: (request: FulfilRequest<Database>) => FulfilSettlement,
): FulfilSettlement[] {
  const settled = inLockOrder(requests).map(({ request, index }) => ({ index, settlement: settle(request) }));
  return inCallerOrder<FulfilSettlement>(settled);
}

/** Thrown out of a group's transaction when one of its requests threw: the group is committed again with savepoints. */
class RequestThrew extends Error {}

export function sqliteFulfil(db: Database, statements: Statements): Fulfil {
  const fulfilAlone = db.transaction((request: FulfilRequest<Database>) => fulfilOne(db, statements, request));
  // Nested in the group's transaction, so better-sqlite3 runs it as a SAVEPOINT: a throw rolls back this attempt only.
  const fulfilGroup = db.transaction((requests: readonly FulfilRequest<Database>[]) =>
    settleEach(requests, (request): FulfilSettlement => {
      try {
        return { ok: true, result: fulfilAlone(request) };
      } catch (error) {
        return { ok: false, error };
      }
    }),
  );
  // No savepoint per attempt (most of a grouped fulfilment's cost when no action throws): the
  // first request that throws rolls the whole group back, and fulfilGroup commits it again, where
  // that request's savepoint keeps its throw from the others. Nothing of the first try commits.
  const fulfilAllOrNone = db.transaction((requests: readonly FulfilRequest<Database>[]) =>
    settleEach(requests, (request): FulfilSettlement => {
      try {
        return { ok: true, result: fulfilOne(db, statements, request) };
      } catch {
        throw new RequestThrew();
      }
    }),
  );
  // A batch of one needs no savepoint or sorting: its throw rolls back its own transaction.
  const fulfilBatch = async (requests: readonly FulfilRequest<Database>[]): Promise<FulfilSettlement[]> => {
    const [only] = requests;
    if (only === undefined) return [];
    if (requests.length > 1) {
      try {
        return fulfilAllOrNone.immediate(requests);
      } catch (error) {
        if (!(error instanceof RequestThrew)) throw error;
        return fulfilGroup.immediate(requests);
      }
    }
    try {
      return [{ ok: true, result: fulfilAlone.immediate(only) }];
    } catch (error) {
      return [{ ok: false, error }];
    }
  };
  return { fulfilBatch };
}
