/**
 * The SQLite store on better-sqlite3: WAL, a busy timeout, statements prepared once. Every write
 * that decides something (fulfil, claim) runs in an IMMEDIATE transaction, so processes sharing
 * the file serialise on it instead of racing.
 */
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { KitError, KitErrorCode } from '../errors.ts';
import { migrate } from './sqlite-schema.ts';
import { sqliteHousekeeping } from './sqlite-housekeeping.ts';
import { COLUMNS, toAttempt, type AttemptRow } from './sqlite-rows.ts';
import { fulfilOnceVia, inCallerOrder, inLockOrder } from './batch.ts';
import type {
  ClaimOptions,
  ClaimOutcomeEventsOptions,
  FulfilOnceOptions,
  FulfilOnceResult,
  FulfilRequest,
  FulfilSettlement,
  NewAttempt,
  NextCheck,
  OutcomeRecording,
  StartBudget,
  StartBudgetCounter,
  StartBudgetRefusal,
  StoredOutcomeEvent,
  VerifyStore,
} from './types.ts';

/** Options of createSqliteStore. */
export interface SqliteStoreOptions {
  /** A file path, or an open better-sqlite3 Database shared with the integrator's own tables. */
  database: string | Database;
  /** How long a writer waits for another process's lock. Default 5000 ms. */
  busyTimeoutMs?: number;
}

/** The SQLite store, with its open database (`db`). */
export type SqliteStore = VerifyStore<Database> & StartBudgetCounter & { readonly db: Database };

interface EventRow {
  event_id: number;
  session_id: string;
  outcome: StoredOutcomeEvent['outcome'];
  source: StoredOutcomeEvent['source'];
  occurred_at: number;
  deliveries: number;
}

/** Ended start budget counters are deleted at most this often, in batches of at most this many. */
const BUDGET_CLEANUP_INTERVAL_MS = 5 * 60_000;
const ENDED_BUDGETS_PER_CLEANUP = 1000;

function openDatabase(database: string | Database, busyTimeoutMs: number): { db: Database; owned: boolean } {
  const owned = typeof database === 'string';
  const db = owned ? new BetterSqlite3(database) : database;
  db.pragma(`busy_timeout = ${Math.trunc(busyTimeoutMs)}`);
  if (!db.memory) db.pragma('journal_mode = WAL');
  // WAL + NORMAL is durable across process crashes (only an OS crash can lose the last commit).
  db.pragma('synchronous = NORMAL');
  return { db, owned };
}

/** The SQLite store (better-sqlite3): your tables share the kit's transaction. */
export function createSqliteStore(options: SqliteStoreOptions): SqliteStore {
  if (typeof options.database !== 'string' && !(options.database instanceof BetterSqlite3)) {
    throw new KitError(
      KitErrorCode.InvalidOptions,
      'createSqliteStore: `database` must be a file path or an open better-sqlite3 Database.',
    );
  }
  const { db, owned } = openDatabase(options.database, options.busyTimeoutMs ?? 5000);
  migrate(db);

  const insert = db.prepare(
    `INSERT INTO verify_kit_attempts (state, session_id, user_ref, action, params, destination, return_to,
       sensitivity, platform, created_at, next_check_at)
     VALUES (@state, @sessionId, @userRef, @action, @params, @destination, @returnTo,
       @sensitivity, @platform, @createdAt, @nextCheckAt)`,
  );
  const byState = db.prepare(`SELECT ${COLUMNS} FROM verify_kit_attempts WHERE state = ?`);
  const bySession = db.prepare(`SELECT ${COLUMNS} FROM verify_kit_attempts WHERE session_id = ?`);
  // @latest = 1: "an older attempt must never be applied after a newer one of the same user and action
  // was applied", so the mark is refused when a newer one is already fulfilled (one statement, no read first).
  const markFulfilled = db.prepare(
    `UPDATE verify_kit_attempts AS a SET outcome = 'fulfilled', fulfilled_at = @now, finished_at = @now,
       lease_owner = NULL, lease_until = NULL
     WHERE a.session_id = @sessionId AND a.outcome = 'pending'
       AND NOT (@latest AND EXISTS (
         SELECT 1 FROM verify_kit_attempts AS n
         WHERE n.user_ref = a.user_ref AND n.action = a.action AND n.start_seq > a.start_seq AND n.outcome = 'fulfilled'))
     RETURNING ${COLUMNS}`,
  );
  const markFailed = db.prepare(
    `UPDATE verify_kit_attempts SET outcome = 'failed', failure_reason = @reason, finished_at = @now, lease_owner = NULL, lease_until = NULL
     WHERE session_id = @sessionId AND outcome = 'pending'
     RETURNING session_id`,
  );
  // Ordering: the newest fulfilled attempt of this user and action started after this one, if any.
  const newerFulfilled = db.prepare(
    `SELECT session_id FROM verify_kit_attempts
     WHERE user_ref = @userRef AND action = @action AND start_seq > @startSeq AND outcome = 'fulfilled'
     ORDER BY start_seq DESC LIMIT 1`,
  );
  const markSuperseded = db.prepare(
    `UPDATE verify_kit_attempts SET outcome = 'superseded', superseded_by = @by, finished_at = @now,
       lease_owner = NULL, lease_until = NULL
     WHERE session_id = @sessionId AND outcome = 'pending'
     RETURNING ${COLUMNS}`,
  );
  const supersedeOlder = db.prepare(
    `UPDATE verify_kit_attempts SET outcome = 'superseded', superseded_by = @by, finished_at = @now,
       lease_owner = NULL, lease_until = NULL
     WHERE user_ref = @userRef AND action = @action AND start_seq < @startSeq AND outcome = 'pending'
     RETURNING ${COLUMNS}`,
  );
  const insertEvent = db.prepare(
    `INSERT INTO verify_kit_outcome_events (session_id, outcome, source, occurred_at, next_delivery_at)
     VALUES (@sessionId, @outcome, @source, @now, @now)
     RETURNING event_id`,
  );
  const claimEvents = db.prepare(
    `UPDATE verify_kit_outcome_events SET lease_owner = @owner, lease_until = @leaseUntil, deliveries = deliveries + 1
     WHERE event_id IN (
       SELECT event_id FROM verify_kit_outcome_events
       WHERE delivered_at IS NULL AND next_delivery_at <= @now AND (lease_until IS NULL OR lease_until <= @now)
         AND (@ids IS NULL OR event_id IN (SELECT value FROM json_each(@ids)))
       ORDER BY next_delivery_at LIMIT @limit)
     RETURNING event_id, session_id, outcome, source, occurred_at, deliveries`,
  );
  const eventDelivered = db.prepare(
    `UPDATE verify_kit_outcome_events SET delivered_at = @now, lease_owner = NULL, lease_until = NULL
     WHERE event_id = @eventId AND lease_owner = @owner AND delivered_at IS NULL`,
  );
  const eventRetry = db.prepare(
    `UPDATE verify_kit_outcome_events SET next_delivery_at = @nextAttemptAt, lease_owner = NULL, lease_until = NULL
     WHERE event_id = @eventId AND lease_owner = @owner AND delivered_at IS NULL`,
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
     WHERE outcome = 'pending' AND created_at <= @maxCreatedAt AND (lease_until IS NULL OR lease_until <= @now)
     RETURNING session_id`,
  );

  const budgetRow = db.prepare('SELECT spent, window_ends_at FROM verify_kit_start_budgets WHERE key = ?');
  const spendBudget = db.prepare(
    `INSERT INTO verify_kit_start_budgets (key, spent, window_ends_at) VALUES (@key, @spent, @windowEndsAt)
     ON CONFLICT (key) DO UPDATE SET spent = excluded.spent, window_ends_at = excluded.window_ends_at`,
  );
  const deleteEndedBudgets = db.prepare(
    `DELETE FROM verify_kit_start_budgets WHERE key IN (
       SELECT key FROM verify_kit_start_budgets WHERE window_ends_at <= ? LIMIT ${ENDED_BUDGETS_PER_CLEANUP})`,
  );
  let nextBudgetCleanupAt = 0;

  /** The outbox row of an outcome, written in the transaction that records the outcome. */
  const recordEvent = (
    event: OutcomeRecording | undefined,
    sessionId: string,
    outcome: StoredOutcomeEvent['outcome'],
    now: number,
  ): string[] => {
    if (event === undefined) return [];
    const row = insertEvent.get({ sessionId, outcome, source: event.source, now }) as { event_id: number };
    return [String(row.event_id)];
  };

  // Nested in fulfilGroup, so better-sqlite3 runs it as a SAVEPOINT: a throw rolls back this attempt only.
  const fulfilOne = db.transaction(
    ({ sessionId, now, effect, options = {} }: FulfilRequest<Database>): FulfilOnceResult => {
      const latest = (options.ordering ?? 'latest') === 'latest';
      // Mark first (one statement decides who wins), then run the effect: both commit or neither.
      const marked = markFulfilled.get({ sessionId, now, latest: latest ? 1 : 0 }) as AttemptRow | undefined;
      if (marked === undefined) return notMarked(sessionId, now, options);
      const attempt = toAttempt(marked);
      const intent = { userRef: attempt.userRef, action: attempt.action, startSeq: attempt.startSeq };
      const returned: unknown = effect(db, attempt);
      if (returned instanceof Promise) {
        // The effect would finish after COMMIT, outside the transaction: refuse and roll back.
        returned.catch(() => {});
        throw new KitError(
          KitErrorCode.InvalidOptions,
          `Action "${attempt.action}": fulfil must be synchronous (it runs inside the kit's SQLite transaction); do not return a Promise.`,
        );
      }
      const eventIds = recordEvent(options.event, sessionId, 'fulfilled', now);
      // Older attempts still pending can never apply after this one: settle them now.
      const olderRows = latest ? (supersedeOlder.all({ ...intent, by: sessionId, now }) as AttemptRow[]) : [];
      const superseded = olderRows.map(toAttempt);
      for (const older of superseded) eventIds.push(...recordEvent(options.event, older.sessionId, 'superseded', now));
      return { kind: 'fulfilled', attempt, superseded, eventIds };
    },
  );
  /** Why the mark was refused: settled already, unknown, or a newer attempt was applied (then superseded). */
  const notMarked = (sessionId: string, now: number, options: FulfilOnceOptions): FulfilOnceResult => {
    const current = bySession.get(sessionId) as AttemptRow | undefined;
    if (current === undefined) return { kind: 'not_pending', attempt: undefined };
    if (current.outcome === 'fulfilled') return { kind: 'already_fulfilled', attempt: toAttempt(current) };
    if (current.outcome !== 'pending') return { kind: 'not_pending', attempt: toAttempt(current) };
    const intent = { userRef: current.user_ref, action: current.action, startSeq: current.start_seq };
    const newer = newerFulfilled.get(intent) as { session_id: string };
    const row = markSuperseded.get({ sessionId, by: newer.session_id, now }) as AttemptRow;
    const eventIds = recordEvent(options.event, sessionId, 'superseded', now);
    return { kind: 'superseded', attempt: toAttempt(row), eventIds };
  };
  const fulfilGroup = db.transaction((requests: readonly FulfilRequest<Database>[]): FulfilSettlement[] => {
    const settled = inLockOrder(requests).map(({ request, index }) => {
      try {
        return { index, settlement: { ok: true, result: fulfilOne(request) } satisfies FulfilSettlement };
      } catch (error) {
        return { index, settlement: { ok: false, error } satisfies FulfilSettlement };
      }
    });
    return inCallerOrder<FulfilSettlement>(settled);
  });
  const fulfilBatch = async (requests: readonly FulfilRequest<Database>[]) => fulfilGroup.immediate(requests);
  const rescheduleGroup = db.transaction((owner: string, checks: readonly NextCheck[]) => {
    for (const { sessionId, nextCheckAt } of checks) reschedule.run({ sessionId, owner, nextCheckAt });
  });
  // Under the write lock, read every counter, then spend all or none: no other start can slip between.
  const startBudgetsTransaction = db.transaction(
    (budgets: readonly StartBudget[], now: number): StartBudgetRefusal[] => {
      if (now >= nextBudgetCleanupAt) {
        const deleted = deleteEndedBudgets.run(now).changes;
        // A full batch means more are waiting: clean again on the next start.
        nextBudgetCleanupAt = deleted < ENDED_BUDGETS_PER_CLEANUP ? now + BUDGET_CLEANUP_INTERVAL_MS : now;
      }
      const counted = budgets.map(({ key, points, durationMs }) => {
        const row = budgetRow.get(key) as { spent: number; window_ends_at: number } | undefined;
        const open = row !== undefined && row.window_ends_at > now;
        return { key, points, spent: open ? row.spent : 0, windowEndsAt: open ? row.window_ends_at : now + durationMs };
      });
      const refusals = counted.flatMap(({ points, spent, windowEndsAt }, budget) =>
        spent >= points ? [{ budget, retryAfterMs: windowEndsAt - now }] : [],
      );
      if (refusals.length === 0) {
        for (const c of counted) spendBudget.run({ key: c.key, spent: c.spent + 1, windowEndsAt: c.windowEndsAt });
      }
      return refusals;
    },
  );
  const failTransaction = db.transaction((sessionId: string, reason: string, now: number, event?: OutcomeRecording) => {
    const marked = markFailed.get({ sessionId, reason, now }) as { session_id: string } | undefined;
    return { eventIds: marked === undefined ? [] : recordEvent(event, sessionId, 'failed', now) };
  });
  const expireTransaction = db.transaction((now: number, maxAgeMs: number, event?: OutcomeRecording) => {
    const expired = expire.all({ now, maxCreatedAt: now - maxAgeMs }) as { session_id: string }[];
    for (const row of expired) recordEvent(event, row.session_id, 'expired', now);
    return expired.length;
  });
  const claimEventsTransaction = db.transaction((o: ClaimOutcomeEventsOptions): StoredOutcomeEvent[] => {
    const rows = claimEvents.all({
      owner: o.owner,
      leaseUntil: o.now + o.leaseMs,
      now: o.now,
      limit: o.limit,
      ids: o.eventIds === undefined ? null : JSON.stringify(o.eventIds.map(Number)),
    }) as EventRow[];
    return rows.map((row) => ({
      eventId: String(row.event_id),
      outcome: row.outcome,
      source: row.source,
      occurredAt: row.occurred_at,
      deliveries: row.deliveries,
      attempt: toAttempt(bySession.get(row.session_id) as AttemptRow),
    }));
  });
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
    fulfilBatch,
    fulfilOnce: fulfilOnceVia<Database>({ fulfilBatch }),
    async recordFailure(sessionId, reason, now, event) {
      return failTransaction.immediate(sessionId, reason, now, event);
    },
    async claimDueAttempts(claim) {
      return claimTransaction.immediate(claim);
    },
    async scheduleNextCheck(sessionId, owner, nextCheckAt) {
      rescheduleGroup.immediate(owner, [{ sessionId, nextCheckAt }]);
    },
    async scheduleNextChecks(owner, checks) {
      rescheduleGroup.immediate(owner, checks);
    },
    async releaseClaims(owner) {
      return release.run(owner).changes;
    },
    async expireAttempts(now, maxAgeMs, event) {
      return expireTransaction.immediate(now, maxAgeMs, event);
    },
    async claimOutcomeEvents(options) {
      return claimEventsTransaction.immediate(options);
    },
    async markOutcomeEventDelivered(eventId, owner, now) {
      eventDelivered.run({ eventId: Number(eventId), owner, now });
    },
    async retryOutcomeEvent(eventId, owner, nextAttemptAt) {
      eventRetry.run({ eventId: Number(eventId), owner, nextAttemptAt });
    },
    async consumeStartBudgets({ budgets, now }) {
      return startBudgetsTransaction.immediate(budgets, now);
    },
    ...sqliteHousekeeping(db),
    async close() {
      if (owned && db.open) db.close();
    },
  };
}
