/**
 * The PostgreSQL store on node-postgres (`pg`), for apps that run as several instances. The
 * integrator passes their own Pool; the kit's tables live beside theirs, and an action's fulfil
 * receives the pool client that holds the kit's open transaction (BEGIN ... COMMIT), so its
 * writes commit together with the fulfilment mark, or not at all.
 *
 * Who wins is decided by locks, never by the application: the fulfilment mark is a conditional
 * UPDATE (a concurrent one waits for the first to commit, then finds nothing pending); with
 * ordering 'latest' every fulfilment of one user's attempts of one action first takes a
 * transaction-scoped advisory lock on that pair, so the newest-wins decision cannot race; sweep
 * and outbox claims take rows with FOR UPDATE SKIP LOCKED and a lease. Outcome events are written
 * in the transaction that records the outcome.
 */
import type { Pool, PoolClient, QueryResultRow } from 'pg';
import { KitError, KitErrorCode } from '../errors.ts';
import { fulfilOnceVia, inCallerOrder, inLockOrder } from './batch.ts';
import { postgresHousekeeping } from './postgres-housekeeping.ts';
import { COLUMNS, toAttempt, type AttemptRow } from './postgres-rows.ts';
import { migrate } from './postgres-schema.ts';
import type {
  ClaimOptions,
  ClaimOutcomeEventsOptions,
  FulfilOnceResult,
  FulfilRequest,
  FulfilSettlement,
  NewAttempt,
  OutcomeRecording,
  StartBudgetCounter,
  StartBudgetRefusal,
  StoredOutcomeEvent,
  VerifyStore,
} from './types.ts';

/** Options of createPostgresStore. */
export interface PostgresStoreOptions {
  /** The app's node-postgres Pool. The store never ends it: the pool is yours to close. */
  pool: Pool;
}

/** The PostgreSQL store; `ready` settles when its migrations are done. */
export type PostgresStore = VerifyStore<PoolClient> &
  StartBudgetCounter & {
    readonly kind: 'postgres';
    readonly pool: Pool;
    /** Resolves once the kit's tables are migrated; every store call waits for it (await it at startup to fail fast). */
    readonly ready: Promise<void>;
  };

/** markFulfilled's rows: the attempt it marked, and the older ones it superseded. */
type RoleRow = AttemptRow & { role: 'fulfilled' | 'superseded' };

interface EventRow {
  event_id: string;
  session_id: string;
  outcome: StoredOutcomeEvent['outcome'];
  source: StoredOutcomeEvent['source'];
  occurred_at: string;
  deliveries: number;
}

/** Ended start budget counters are deleted at most this often (per store), in batches of at most this many. */
const BUDGET_CLEANUP_INTERVAL_MS = 5 * 60_000;
const ENDED_BUDGETS_PER_CLEANUP = 1000;

const SQL = {
  insert: `INSERT INTO verify_kit_attempts
      (state, session_id, user_ref, action, params, return_to, sensitivity, platform, created_at, next_check_at,
       destination)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
  byState: `SELECT ${COLUMNS} FROM verify_kit_attempts WHERE state = $1`,
  bySession: `SELECT ${COLUMNS} FROM verify_kit_attempts WHERE session_id = $1`,
  // Every fulfilment of one user's attempts of one action queues here, in its transaction, so the
  // ordering decided below cannot race (user_ref and action never change once stored).
  // A group takes all its pairs' locks first, in one sorted order (OFFSET 0 keeps the sort below the
  // locking), so two processes committing overlapping groups queue instead of deadlocking.
  lockIntents: `SELECT pg_advisory_xact_lock(k) FROM (
      SELECT DISTINCT hashtextextended(user_ref || chr(31) || action, 0) AS k
      FROM verify_kit_attempts WHERE session_id = ANY($1::text[]) ORDER BY k OFFSET 0) AS keys`,
  // $3 true: "an older attempt must never be applied after a newer one of the same user and action
  // was applied", so the mark is refused when a newer one is already fulfilled. The user's newer
  // attempts are found first (OFFSET 0 keeps that a separate step, on the user's few rows): given
  // `outcome = 'fulfilled'` directly, the planner may walk the settled-attempts index instead, whose
  // statistics say it is empty while a sweep fills it, one full scan per fulfilment.
  // One statement marks the attempt and, with ordering 'latest', settles the user's older pending
  // attempts of the action as superseded (they must never apply after this one): one round trip.
  markFulfilled: `WITH marked AS (
      UPDATE verify_kit_attempts AS a
      SET outcome = 'fulfilled', fulfilled_at = $2, finished_at = $2, lease_owner = NULL, lease_until = NULL
      WHERE a.session_id = $1 AND a.outcome = 'pending'
        AND NOT ($3::boolean AND EXISTS (
          SELECT 1 FROM (
            SELECT n.outcome FROM verify_kit_attempts AS n
            WHERE n.user_ref = a.user_ref AND n.action = a.action AND n.start_seq > a.start_seq OFFSET 0) AS newer
          WHERE newer.outcome = 'fulfilled'))
      RETURNING a.*),
    older AS (
      UPDATE verify_kit_attempts AS o
      SET outcome = 'superseded', superseded_by = m.session_id, finished_at = $2, lease_owner = NULL, lease_until = NULL
      FROM marked AS m
      WHERE $3::boolean AND o.user_ref = m.user_ref AND o.action = m.action AND o.start_seq < m.start_seq
        AND o.outcome = 'pending'
      RETURNING o.*)
    SELECT 'fulfilled' AS role, ${COLUMNS} FROM marked
    UNION ALL SELECT 'superseded' AS role, ${COLUMNS} FROM older`,
  newerFulfilled: `SELECT n.session_id FROM verify_kit_attempts AS a JOIN verify_kit_attempts AS n
      ON n.user_ref = a.user_ref AND n.action = a.action AND n.start_seq > a.start_seq AND n.outcome = 'fulfilled'
    WHERE a.session_id = $1 ORDER BY n.start_seq DESC LIMIT 1`,
  markSuperseded: `UPDATE verify_kit_attempts
    SET outcome = 'superseded', superseded_by = $2, finished_at = $3, lease_owner = NULL, lease_until = NULL
    WHERE session_id = $1 AND outcome = 'pending'
    RETURNING ${COLUMNS}`,
  markFailed: `UPDATE verify_kit_attempts
    SET outcome = 'failed', failure_reason = $2, finished_at = $3, lease_owner = NULL, lease_until = NULL
    WHERE session_id = $1 AND outcome = 'pending'
    RETURNING session_id`,
  insertEvent: `INSERT INTO verify_kit_outcome_events (session_id, outcome, source, occurred_at, next_delivery_at)
    VALUES ($1, $2, $3, $4, $4) RETURNING event_id`,
  claimEvents: `UPDATE verify_kit_outcome_events SET lease_owner = $1, lease_until = $2, deliveries = deliveries + 1
    WHERE event_id IN (
      SELECT event_id FROM verify_kit_outcome_events
      WHERE delivered_at IS NULL AND next_delivery_at <= $3 AND (lease_until IS NULL OR lease_until <= $3)
        AND ($5::bigint[] IS NULL OR event_id = ANY($5::bigint[]))
      ORDER BY next_delivery_at LIMIT $4
      FOR UPDATE SKIP LOCKED)
    RETURNING event_id, session_id, outcome, source, occurred_at, deliveries`,
  bySessions: `SELECT ${COLUMNS} FROM verify_kit_attempts WHERE session_id = ANY($1::text[])`,
  eventDelivered: `UPDATE verify_kit_outcome_events SET delivered_at = $3, lease_owner = NULL, lease_until = NULL
    WHERE event_id = $1 AND lease_owner = $2 AND delivered_at IS NULL`,
  eventRetry: `UPDATE verify_kit_outcome_events SET next_delivery_at = $3, lease_owner = NULL, lease_until = NULL
    WHERE event_id = $1 AND lease_owner = $2 AND delivered_at IS NULL`,
  // SKIP LOCKED: two sweeps claiming at once take disjoint rows instead of queueing on each other.
  claimDue: `UPDATE verify_kit_attempts SET lease_owner = $1, lease_until = $2
    WHERE state IN (
      SELECT state FROM verify_kit_attempts
      WHERE outcome = 'pending' AND next_check_at <= $3 AND created_at > $4
        AND (lease_until IS NULL OR lease_until <= $3) AND ($6::text IS NULL OR platform = $6::text)
      ORDER BY next_check_at LIMIT $5
      FOR UPDATE SKIP LOCKED)
    RETURNING ${COLUMNS}`,
  reschedule: `UPDATE verify_kit_attempts AS a
    SET next_check_at = c.next_check_at, sweep_checks = a.sweep_checks + 1, lease_owner = NULL, lease_until = NULL
    FROM unnest($2::text[], $3::bigint[]) AS c (session_id, next_check_at)
    WHERE a.session_id = c.session_id AND a.lease_owner = $1 AND a.outcome = 'pending'`,
  release: 'UPDATE verify_kit_attempts SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = $1',
  // One call, one transaction (the statement's): see the function in postgres-schema.ts.
  consumeStartBudgets: 'SELECT refused_budget, retry_after_ms FROM verify_kit_consume_start_budgets($1, $2, $3, $4)',
  // SKIP LOCKED: never waits on a counter a start holds, so it cannot deadlock with one.
  deleteEndedBudgets: `DELETE FROM verify_kit_start_budgets WHERE key IN (
      SELECT key FROM verify_kit_start_budgets WHERE window_ends_at <= $1 LIMIT ${ENDED_BUDGETS_PER_CLEANUP} FOR UPDATE SKIP LOCKED)`,
  expire: `UPDATE verify_kit_attempts SET outcome = 'expired', finished_at = $1, lease_owner = NULL, lease_until = NULL
    WHERE outcome = 'pending' AND created_at <= $2 AND (lease_until IS NULL OR lease_until <= $1)
    RETURNING session_id`,
} as const;

/** SQLSTATE 25P02: a statement was sent after an error had already aborted the transaction. */
const IN_FAILED_TRANSACTION = '25P02';
const ABORTED = 'The transaction was aborted by an error inside the action, so nothing was committed.';

function isPool(value: unknown): value is Pool {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Pool).connect === 'function' &&
    typeof (value as Pool).query === 'function' &&
    typeof (value as Pool).end === 'function'
  );
}

/** The PostgreSQL store (node-postgres Pool), for several instances of the app. */
export function createPostgresStore(options: PostgresStoreOptions): PostgresStore {
  if (typeof options !== 'object' || options === null || !isPool(options.pool)) {
    throw new KitError(
      KitErrorCode.InvalidOptions,
      'createPostgresStore: `pool` must be a node-postgres Pool, ' +
        'e.g. new pg.Pool({ connectionString: process.env.DATABASE_URL }).',
    );
  }
  const { pool } = options;
  const ready = migrate(pool);
  // A failed migration is reported by every call (and by `ready`); never as an unhandled rejection.
  ready.catch(() => {});

  const query = async <Row extends QueryResultRow>(name: keyof typeof SQL, values: unknown[]) => {
    await ready;
    return pool.query<Row>({ name: `verify_kit_${name}`, text: SQL[name], values });
  };
  /** The same, on the transaction's client. */
  const on = <Row extends QueryResultRow>(client: PoolClient, name: keyof typeof SQL, values: unknown[]) =>
    client.query<Row>({ name: `verify_kit_${name}`, text: SQL[name], values });
  /** Runs `work` inside BEGIN ... COMMIT on one pooled client; rolls back on any throw. */
  const transaction = async <T>(work: (client: PoolClient) => Promise<T>): Promise<T> => {
    await ready;
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await work(client);
      const committed = await client.query('COMMIT');
      // An action that swallowed an SQL error leaves the transaction aborted: COMMIT then rolls back.
      if (committed.command === 'ROLLBACK') throw new Error(ABORTED);
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: Error) => {
        broken = rollbackError; // the connection is unusable: destroy it instead of pooling it
      });
      if ((error as { code?: string }).code === IN_FAILED_TRANSACTION) {
        // The action swallowed an SQL error; the kit's next statement found the transaction aborted.
        throw new Error(ABORTED, { cause: error });
      }
      throw error;
    } finally {
      client.release(broken);
    }
  };

  let nextBudgetCleanupAt = 0;

  /** The outbox row of an outcome, written in the transaction that records the outcome. */
  const recordEvent = async (
    client: PoolClient,
    event: OutcomeRecording | undefined,
    sessionId: string,
    outcome: StoredOutcomeEvent['outcome'],
    now: number,
  ): Promise<string[]> => {
    if (event === undefined) return [];
    const { rows } = await on<{ event_id: string }>(client, 'insertEvent', [sessionId, outcome, event.source, now]);
    return rows.map((row) => String(row.event_id)); // INSERT ... RETURNING: the one new event
  };

  /** One request of a group, on the group's transaction: fulfilOnce's decision. */
  const fulfilOne = async (client: PoolClient, request: FulfilRequest<PoolClient>): Promise<FulfilOnceResult> => {
    const { sessionId, effect, now, options = {} } = request;
    const latest = (options.ordering ?? 'latest') === 'latest';
    // Mark first: a concurrent caller's UPDATE waits on this row, then finds it no longer pending.
    const { rows: marked } = await on<RoleRow>(client, 'markFulfilled', [sessionId, now, latest]);
    const row = marked.find((r) => r.role === 'fulfilled');
    if (row === undefined) {
      const { rows } = await on<AttemptRow>(client, 'bySession', [sessionId]);
      if (rows[0] === undefined) return { kind: 'not_pending', attempt: undefined };
      const current = toAttempt(rows[0]);
      if (current.outcome === 'fulfilled') return { kind: 'already_fulfilled', attempt: current };
      if (current.outcome !== 'pending') return { kind: 'not_pending', attempt: current };
      // Still pending, so the mark was refused: a newer attempt of this user and action was applied.
      const newer = await on<{ session_id: string }>(client, 'newerFulfilled', [sessionId]);
      // Never undefined: the mark is refused only when a newer attempt is fulfilled.
      // eslint-disable-next-line @typescript-eslint/no-non-null-assertion
      const by = newer.rows[0]!.session_id;
      const superseded = await on<AttemptRow>(client, 'markSuperseded', [sessionId, by, now]);
      const eventIds = await recordEvent(client, options.event, sessionId, 'superseded', now);
      // Never undefined: under the intent lock the attempt read above is still pending.
      // eslint-disable-next-line @typescript-eslint/no-non-null-assertion
      return { kind: 'superseded', attempt: toAttempt(superseded.rows[0]!), eventIds };
    }
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
  };

  /**
   * Group commit in one transaction. A batch of one needs no savepoint: its error rolls back the
   * whole transaction and rejects, as fulfilOnce always did. In a larger group each request runs
   * in its own savepoint, so a throwing effect (or one that swallowed an SQL error and left the
   * transaction aborted) rolls back only its own attempt.
   */
  const fulfilBatch = async (requests: readonly FulfilRequest<PoolClient>[]): Promise<FulfilSettlement[]> => {
    if (requests.length === 0) return [];
    const ordered = requests.filter((r) => (r.options?.ordering ?? 'latest') === 'latest').map((r) => r.sessionId);
    const [only] = requests;
    if (requests.length === 1 && only !== undefined) {
      return [
        {
          ok: true,
          result: await transaction(async (client) => {
            if (ordered.length > 0) await on(client, 'lockIntents', [ordered]);
            return fulfilOne(client, only);
          }),
        },
      ];
    }
    return transaction(async (client) => {
      if (ordered.length > 0) await on(client, 'lockIntents', [ordered]);
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
          settled.push({
            index,
            settlement: { ok: false, error: aborted ? new Error(ABORTED, { cause: error }) : error },
          });
        }
      }
      return inCallerOrder(settled);
    });
  };

  return {
    kind: 'postgres',
    pool,
    ready,
    async insertAttempt(attempt: NewAttempt) {
      await query('insert', [
        attempt.state,
        attempt.sessionId,
        attempt.userRef,
        attempt.action,
        JSON.stringify(attempt.params),
        attempt.returnTo,
        attempt.sensitivity,
        attempt.platform,
        attempt.createdAt,
        attempt.nextCheckAt,
        attempt.destination,
      ]);
    },
    async findAttemptByState(state: string) {
      const { rows } = await query<AttemptRow>('byState', [state]);
      return rows[0] === undefined ? undefined : toAttempt(rows[0]);
    },
    fulfilBatch,
    fulfilOnce: fulfilOnceVia<PoolClient>({ fulfilBatch }),
    async recordFailure(sessionId, reason, now, event) {
      if (event === undefined) {
        await query('markFailed', [sessionId, reason, now]);
        return { eventIds: [] };
      }
      return transaction(async (client) => {
        const marked = await on(client, 'markFailed', [sessionId, reason, now]);
        return { eventIds: marked.rowCount === 1 ? await recordEvent(client, event, sessionId, 'failed', now) : [] };
      });
    },
    async claimDueAttempts(o: ClaimOptions) {
      const { rows } = await query<AttemptRow>('claimDue', [
        o.owner,
        o.now + o.leaseMs,
        o.now,
        o.now - o.maxAgeMs,
        o.limit,
        o.platform ?? null,
      ]);
      // RETURNING keeps no order: most overdue first, as the sweep expects.
      return rows.map(toAttempt).sort((a, b) => a.nextCheckAt - b.nextCheckAt);
    },
    async scheduleNextCheck(sessionId, owner, nextCheckAt) {
      await query('reschedule', [owner, [sessionId], [nextCheckAt]]);
    },
    async scheduleNextChecks(owner, checks) {
      if (checks.length === 0) return;
      await query('reschedule', [owner, checks.map((c) => c.sessionId), checks.map((c) => c.nextCheckAt)]);
    },
    async releaseClaims(owner) {
      return (await query('release', [owner])).rowCount ?? 0;
    },
    async expireAttempts(now, maxAgeMs, event) {
      if (event === undefined) return (await query('expire', [now, now - maxAgeMs])).rowCount ?? 0;
      return transaction(async (client) => {
        const { rows } = await on<{ session_id: string }>(client, 'expire', [now, now - maxAgeMs]);
        for (const row of rows) await recordEvent(client, event, row.session_id, 'expired', now);
        return rows.length;
      });
    },
    async claimOutcomeEvents(o: ClaimOutcomeEventsOptions) {
      const ids = o.eventIds === undefined ? null : o.eventIds.map(Number);
      const { rows } = await query<EventRow>('claimEvents', [o.owner, o.now + o.leaseMs, o.now, o.limit, ids]);
      if (rows.length === 0) return [];
      const attempts = await query<AttemptRow>('bySessions', [rows.map((r) => r.session_id)]);
      const bySessionId = new Map(attempts.rows.map((row) => [row.session_id, toAttempt(row)]));
      return rows
        .map((row) => ({
          eventId: String(row.event_id),
          outcome: row.outcome,
          source: row.source,
          occurredAt: Number(row.occurred_at),
          deliveries: row.deliveries,
          // Never undefined: attempts are purged only together with their events.
          // eslint-disable-next-line @typescript-eslint/no-non-null-assertion
          attempt: bySessionId.get(row.session_id)!,
        }))
        .sort((a, b) => Number(a.eventId) - Number(b.eventId));
    },
    async markOutcomeEventDelivered(eventId, owner, now) {
      await query('eventDelivered', [Number(eventId), owner, now]);
    },
    async retryOutcomeEvent(eventId, owner, nextAttemptAt) {
      await query('eventRetry', [Number(eventId), owner, nextAttemptAt]);
    },
    async consumeStartBudgets({ budgets, now }): Promise<StartBudgetRefusal[]> {
      const values = [budgets.map((b) => b.key), budgets.map((b) => b.points), budgets.map((b) => b.durationMs), now];
      const { rows } = await query<{ refused_budget: number; retry_after_ms: string }>('consumeStartBudgets', values);
      if (now >= nextBudgetCleanupAt) {
        const deleted = (await query('deleteEndedBudgets', [now])).rowCount ?? 0;
        // A full batch means more are waiting: clean again on the next start.
        nextBudgetCleanupAt = deleted < ENDED_BUDGETS_PER_CLEANUP ? now + BUDGET_CLEANUP_INTERVAL_MS : now;
      }
      return rows.map((row) => ({ budget: row.refused_budget, retryAfterMs: Number(row.retry_after_ms) }));
    },
    ...postgresHousekeeping(pool, ready),
    async close() {
      // The pool belongs to the app; only wait for a migration still running.
      await ready.catch(() => {});
    },
  };
}
