/**
 * The SQLite store on better-sqlite3: WAL, a busy timeout, statements prepared once. Every write
 * that decides something (fulfil, claim) runs in an IMMEDIATE transaction, so processes sharing
 * the file serialise on it instead of racing.
 */
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { KitError, KitErrorCode } from '../errors.ts';
import type { JsonValue } from '../types.ts';
import { migrate } from './sqlite-schema.ts';
import type { Attempt, ClaimOptions, FulfilOnceResult, NewAttempt, VerifyStore } from './types.ts';

export interface SqliteStoreOptions {
  /** A file path, or an open better-sqlite3 Database shared with the integrator's own tables. */
  database: string | Database;
  /** How long a writer waits for another process's lock. Default 5000 ms. */
  busyTimeoutMs?: number;
}

export type SqliteStore = VerifyStore<Database> & { readonly db: Database };

interface AttemptRow {
  state: string;
  session_id: string;
  user_ref: string;
  action: string;
  params: string;
  return_to: string;
  sensitivity: Attempt['sensitivity'];
  platform: Attempt['platform'];
  created_at: number;
  outcome: Attempt['outcome'];
  failure_reason: string | null;
  fulfilled_at: number | null;
  finished_at: number | null;
  next_check_at: number;
  sweep_checks: number;
}

const COLUMNS = `state, session_id, user_ref, action, params, return_to, sensitivity, platform, created_at,
  outcome, failure_reason, fulfilled_at, finished_at, next_check_at, sweep_checks`;

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
    createdAt: row.created_at,
    outcome: row.outcome,
    failureReason: row.failure_reason,
    fulfilledAt: row.fulfilled_at,
    finishedAt: row.finished_at,
    nextCheckAt: row.next_check_at,
    sweepChecks: row.sweep_checks,
  };
}

function openDatabase(database: string | Database, busyTimeoutMs: number): { db: Database; owned: boolean } {
  const owned = typeof database === 'string';
  const db = owned ? new BetterSqlite3(database) : database;
  db.pragma(`busy_timeout = ${Math.trunc(busyTimeoutMs)}`);
  if (!db.memory) db.pragma('journal_mode = WAL');
  // WAL + NORMAL is durable across process crashes (only an OS crash can lose the last commit).
  db.pragma('synchronous = NORMAL');
  return { db, owned };
}

export function createSqliteStore(options: SqliteStoreOptions): SqliteStore {
  if (typeof options.database !== 'string' && !(options.database instanceof BetterSqlite3)) {
    throw new KitError(
      KitErrorCode.InvalidConfig,
      'createSqliteStore: `database` must be a file path or an open better-sqlite3 Database.',
    );
  }
  const { db, owned } = openDatabase(options.database, options.busyTimeoutMs ?? 5000);
  migrate(db);

  const insert = db.prepare(
    `INSERT INTO verify_kit_attempts (state, session_id, user_ref, action, params, return_to, sensitivity, platform, created_at, next_check_at)
     VALUES (@state, @sessionId, @userRef, @action, @params, @returnTo, @sensitivity, @platform, @createdAt, @nextCheckAt)`,
  );
  const byState = db.prepare(`SELECT ${COLUMNS} FROM verify_kit_attempts WHERE state = ?`);
  const bySession = db.prepare(`SELECT ${COLUMNS} FROM verify_kit_attempts WHERE session_id = ?`);
  const markFulfilled = db.prepare(
    `UPDATE verify_kit_attempts SET outcome = 'fulfilled', fulfilled_at = @now, finished_at = @now, lease_owner = NULL, lease_until = NULL
     WHERE session_id = @sessionId AND outcome = 'pending'
     RETURNING ${COLUMNS}`,
  );
  const markFailed = db.prepare(
    `UPDATE verify_kit_attempts SET outcome = 'failed', failure_reason = @reason, finished_at = @now, lease_owner = NULL, lease_until = NULL
     WHERE session_id = @sessionId AND outcome = 'pending'`,
  );
  const claimDue = db.prepare(
    `UPDATE verify_kit_attempts SET lease_owner = @owner, lease_until = @leaseUntil
     WHERE state IN (
       SELECT state FROM verify_kit_attempts
       WHERE outcome = 'pending' AND next_check_at <= @now AND created_at > @minCreatedAt
         AND (lease_until IS NULL OR lease_until <= @now) AND (@platform IS NULL OR platform = @platform)
       ORDER BY next_check_at LIMIT @limit)
     RETURNING ${COLUMNS}`,
  );
  const reschedule = db.prepare(
    `UPDATE verify_kit_attempts SET next_check_at = @nextCheckAt, sweep_checks = sweep_checks + 1, lease_owner = NULL, lease_until = NULL
     WHERE session_id = @sessionId AND lease_owner = @owner AND outcome = 'pending'`,
  );
  const release = db.prepare(
    'UPDATE verify_kit_attempts SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = ?',
  );
  const expire = db.prepare(
    `UPDATE verify_kit_attempts SET outcome = 'expired', finished_at = @now, lease_owner = NULL, lease_until = NULL
     WHERE outcome = 'pending' AND created_at <= @maxCreatedAt AND (lease_until IS NULL OR lease_until <= @now)`,
  );

  const fulfilTransaction = db.transaction(
    (sessionId: string, now: number, effect: (tx: Database, attempt: Attempt) => void): FulfilOnceResult => {
      // Mark first (one statement decides who wins), then run the effect: both commit or neither.
      const marked = markFulfilled.get({ sessionId, now }) as AttemptRow | undefined;
      if (marked === undefined) {
        const row = bySession.get(sessionId) as AttemptRow | undefined;
        if (row === undefined) return { kind: 'not_pending', attempt: undefined };
        const attempt = toAttempt(row);
        return attempt.outcome === 'fulfilled' ? { kind: 'already_fulfilled', attempt } : { kind: 'not_pending', attempt };
      }
      const attempt = toAttempt(marked);
      const returned: unknown = effect(db, attempt);
      if (returned instanceof Promise) {
        // The effect would finish after COMMIT, outside the transaction: refuse and roll back.
        returned.catch(() => {});
        throw new KitError(
          KitErrorCode.InvalidConfig,
          `Action "${attempt.action}": fulfil must be synchronous (it runs inside the kit's SQLite transaction); do not return a Promise.`,
        );
      }
      return { kind: 'fulfilled', attempt };
    },
  );
  const claimTransaction = db.transaction((o: ClaimOptions) =>
    (
      claimDue.all({
        owner: o.owner,
        leaseUntil: o.now + o.leaseMs,
        now: o.now,
        minCreatedAt: o.now - o.maxAgeMs,
        limit: o.limit,
        platform: o.platform ?? null,
      }) as AttemptRow[]
    ).map(toAttempt),
  );

  return {
    db,
    async insertAttempt(attempt: NewAttempt) {
      insert.run({ ...attempt, params: JSON.stringify(attempt.params) });
    },
    async findAttemptByState(state: string) {
      const row = byState.get(state) as AttemptRow | undefined;
      return row === undefined ? undefined : toAttempt(row);
    },
    async fulfilOnce(sessionId, effect, now) {
      return fulfilTransaction.immediate(sessionId, now, effect);
    },
    async recordFailure(sessionId, reason, now) {
      markFailed.run({ sessionId, reason, now });
    },
    async claimDueAttempts(claim) {
      return claimTransaction.immediate(claim);
    },
    async scheduleNextCheck(sessionId, owner, nextCheckAt) {
      reschedule.run({ sessionId, owner, nextCheckAt });
    },
    async releaseClaims(owner) {
      return release.run(owner).changes;
    },
    async expireAttempts(now, maxAgeMs) {
      return expire.run({ now, maxCreatedAt: now - maxAgeMs }).changes;
    },
    async close() {
      if (owned && db.open) db.close();
    },
  };
}
