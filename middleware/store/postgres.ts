/**
 * The PostgreSQL store on node-postgres (`pg`), for apps that run as several instances. The
 * integrator passes their own Pool; the kit's tables live beside theirs, and an action's fulfil
 * receives the pool client that holds the kit's open transaction (BEGIN ... COMMIT), so its
 * writes commit together with the fulfilment mark, or not at all.
 *
 * Who wins is decided by row locks, never by the application: the fulfilment mark is a
 * conditional UPDATE (a concurrent one waits for the first to commit, then finds nothing pending),
 * and sweep claims take rows with FOR UPDATE SKIP LOCKED and a lease.
 */
import type { Pool, PoolClient, QueryResultRow } from 'pg';
import { KitError, KitErrorCode } from '../errors.ts';
import type { JsonValue } from '../types.ts';
import { migrate } from './postgres-schema.ts';
import type { Attempt, ClaimOptions, FulfilOnceResult, NewAttempt, VerifyStore } from './types.ts';

export interface PostgresStoreOptions {
  /** The app's node-postgres Pool. The store never ends it: the pool is yours to close. */
  pool: Pool;
}

export type PostgresStore = VerifyStore<PoolClient> & {
  readonly kind: 'postgres';
  readonly pool: Pool;
  /** Resolves once the kit's tables are migrated; every store call waits for it. Await it at startup to fail fast. */
  readonly ready: Promise<void>;
};

interface AttemptRow {
  state: string;
  session_id: string;
  user_ref: string;
  action: string;
  params: string;
  return_to: string;
  sensitivity: Attempt['sensitivity'];
  platform: Attempt['platform'];
  // BIGINT columns arrive as strings.
  created_at: string;
  outcome: Attempt['outcome'];
  failure_reason: string | null;
  fulfilled_at: string | null;
  finished_at: string | null;
  next_check_at: string;
  sweep_checks: number;
}

const COLUMNS = `state, session_id, user_ref, action, params, return_to, sensitivity, platform, created_at,
  outcome, failure_reason, fulfilled_at, finished_at, next_check_at, sweep_checks`;

const nullableNumber = (value: string | null): number | null => (value === null ? null : Number(value));

function toAttempt(row: AttemptRow): Attempt {
  return {
    state: row.state,
    sessionId: row.session_id,
    userRef: row.user_ref,
    action: row.action,
    params: JSON.parse(row.params) as JsonValue,
    returnTo: row.return_to,
    sensitivity: row.sensitivity,
    platform: row.platform,
    createdAt: Number(row.created_at),
    outcome: row.outcome,
    failureReason: row.failure_reason,
    fulfilledAt: nullableNumber(row.fulfilled_at),
    finishedAt: nullableNumber(row.finished_at),
    nextCheckAt: Number(row.next_check_at),
    sweepChecks: row.sweep_checks,
  };
}

const SQL = {
  insert: `INSERT INTO verify_kit_attempts
      (state, session_id, user_ref, action, params, return_to, sensitivity, platform, created_at, next_check_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
  byState: `SELECT ${COLUMNS} FROM verify_kit_attempts WHERE state = $1`,
  bySession: `SELECT ${COLUMNS} FROM verify_kit_attempts WHERE session_id = $1`,
  markFulfilled: `UPDATE verify_kit_attempts
    SET outcome = 'fulfilled', fulfilled_at = $2, finished_at = $2, lease_owner = NULL, lease_until = NULL
    WHERE session_id = $1 AND outcome = 'pending'
    RETURNING ${COLUMNS}`,
  markFailed: `UPDATE verify_kit_attempts
    SET outcome = 'failed', failure_reason = $2, finished_at = $3, lease_owner = NULL, lease_until = NULL
    WHERE session_id = $1 AND outcome = 'pending'`,
  // SKIP LOCKED: two sweeps claiming at once take disjoint rows instead of queueing on each other.
  claimDue: `UPDATE verify_kit_attempts SET lease_owner = $1, lease_until = $2
    WHERE state IN (
      SELECT state FROM verify_kit_attempts
      WHERE outcome = 'pending' AND next_check_at <= $3 AND created_at > $4
        AND (lease_until IS NULL OR lease_until <= $3) AND ($6::text IS NULL OR platform = $6::text)
      ORDER BY next_check_at LIMIT $5
      FOR UPDATE SKIP LOCKED)
    RETURNING ${COLUMNS}`,
  reschedule: `UPDATE verify_kit_attempts
    SET next_check_at = $3, sweep_checks = sweep_checks + 1, lease_owner = NULL, lease_until = NULL
    WHERE session_id = $1 AND lease_owner = $2 AND outcome = 'pending'`,
  release: 'UPDATE verify_kit_attempts SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = $1',
  expire: `UPDATE verify_kit_attempts SET outcome = 'expired', finished_at = $1, lease_owner = NULL, lease_until = NULL
    WHERE outcome = 'pending' AND created_at <= $2 AND (lease_until IS NULL OR lease_until <= $1)`,
} as const;

function isPool(value: unknown): value is Pool {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Pool).connect === 'function' &&
    typeof (value as Pool).query === 'function' &&
    typeof (value as Pool).end === 'function'
  );
}

export function createPostgresStore(options: PostgresStoreOptions): PostgresStore {
  if (typeof options !== 'object' || options === null || !isPool(options.pool)) {
    throw new KitError(
      KitErrorCode.InvalidConfig,
      'createPostgresStore: `pool` must be a node-postgres Pool, e.g. new pg.Pool({ connectionString: process.env.DATABASE_URL }).',
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
      if (committed.command === 'ROLLBACK') {
        throw new Error('The transaction was aborted by an error inside the action, so nothing was committed.');
      }
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: Error) => {
        broken = rollbackError; // the connection is unusable: destroy it instead of pooling it
      });
      throw error;
    } finally {
      client.release(broken);
    }
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
      ]);
    },
    async findAttemptByState(state: string) {
      const { rows } = await query<AttemptRow>('byState', [state]);
      return rows[0] === undefined ? undefined : toAttempt(rows[0]);
    },
    async fulfilOnce(sessionId, effect, now): Promise<FulfilOnceResult> {
      return transaction(async (client) => {
        // Mark first: a concurrent caller's UPDATE waits on this row, then finds it no longer pending.
        const marked = await client.query<AttemptRow>({ name: 'verify_kit_markFulfilled', text: SQL.markFulfilled, values: [sessionId, now] });
        if (marked.rows[0] === undefined) {
          const { rows } = await client.query<AttemptRow>({ name: 'verify_kit_bySession', text: SQL.bySession, values: [sessionId] });
          if (rows[0] === undefined) return { kind: 'not_pending', attempt: undefined };
          const attempt = toAttempt(rows[0]);
          return attempt.outcome === 'fulfilled' ? { kind: 'already_fulfilled', attempt } : { kind: 'not_pending', attempt };
        }
        const attempt = toAttempt(marked.rows[0]);
        // The action's writes go through the same client, inside the same transaction.
        await effect(client, attempt);
        return { kind: 'fulfilled', attempt };
      });
    },
    async recordFailure(sessionId, reason, now) {
      await query('markFailed', [sessionId, reason, now]);
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
      await query('reschedule', [sessionId, owner, nextCheckAt]);
    },
    async releaseClaims(owner) {
      return (await query('release', [owner])).rowCount ?? 0;
    },
    async expireAttempts(now, maxAgeMs) {
      return (await query('expire', [now, now - maxAgeMs])).rowCount ?? 0;
    },
    async close() {
      // The pool belongs to the app; only wait for a migration still running.
      await ready.catch(() => {});
    },
  };
}
