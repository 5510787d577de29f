/**
 * Every statement of the SQLite store, in one place (its migrations are in sqlite-schema.ts). The
 * store's modules prepare them once, when the store is created, and only run them.
 */
import type { Database, Statement } from 'better-sqlite3';
import { COLUMNS } from './sqlite-rows.ts';

/** Ended start budget counters are deleted in batches of at most this many. */
export const ENDED_BUDGETS_PER_CLEANUP = 1000;

/** Attempts, their fulfilment, the sweep's claims, the outcome outbox and the start budgets. */
export const SQL = {
  insert: `INSERT INTO verify_kit_attempts (state, session_id, user_ref, action, params, destination, return_to,
       sensitivity, platform, created_at, next_check_at, service_user_ref, client_id)
     VALUES (@state, @sessionId, @userRef, @action, @params, @destination, @returnTo,
       @sensitivity, @platform, @createdAt, @nextCheckAt, @serviceUserRef, @clientId)`,
  byState: `SELECT ${COLUMNS} FROM verify_kit_attempts WHERE state = ?`,
  bySession: `SELECT ${COLUMNS} FROM verify_kit_attempts WHERE session_id = ?`,
  // @latest = 1: "an older attempt must never be applied after a newer one of the same user and action
  // was applied", so the mark is refused when a newer one is already fulfilled (one statement, no read first).
  // No RETURNING: the caller already holds the attempt, so the mark need not build the row again.
  markFulfilled: `UPDATE verify_kit_attempts AS a SET outcome = 'fulfilled', fulfilled_at = @now, finished_at = @now,
       lease_owner = NULL, lease_until = NULL
     WHERE a.session_id = @sessionId AND a.outcome = 'pending'
       AND NOT (@latest AND EXISTS (
         SELECT 1 FROM verify_kit_attempts AS n
         WHERE n.user_ref = a.user_ref AND n.action = a.action AND n.start_seq > a.start_seq AND n.outcome = 'fulfilled'))`,
  markFailed: `UPDATE verify_kit_attempts SET outcome = 'failed', failure_reason = @reason, finished_at = @now, lease_owner = NULL, lease_until = NULL
     WHERE session_id = @sessionId AND outcome = 'pending'
     RETURNING session_id`,
  // Ordering: the newest fulfilled attempt of this user and action started after this one, if any.
  newerFulfilled: `SELECT session_id FROM verify_kit_attempts
     WHERE user_ref = @userRef AND action = @action AND start_seq > @startSeq AND outcome = 'fulfilled'
     ORDER BY start_seq DESC LIMIT 1`,
  markSuperseded: `UPDATE verify_kit_attempts SET outcome = 'superseded', superseded_by = @by, finished_at = @now,
       lease_owner = NULL, lease_until = NULL
     WHERE session_id = @sessionId AND outcome = 'pending'
     RETURNING ${COLUMNS}`,
  // Asked before supersedeOlder: an UPDATE ... RETURNING costs tens of microseconds even when it
  // changes nothing (most fulfilments have no older attempt pending), this read a few.
  hasOlderPending: `SELECT EXISTS (SELECT 1 FROM verify_kit_attempts
     WHERE user_ref = @userRef AND action = @action AND start_seq < @startSeq AND outcome = 'pending') AS found`,
  supersedeOlder: `UPDATE verify_kit_attempts SET outcome = 'superseded', superseded_by = @by, finished_at = @now,
       lease_owner = NULL, lease_until = NULL
     WHERE user_ref = @userRef AND action = @action AND start_seq < @startSeq AND outcome = 'pending'
     RETURNING ${COLUMNS}`,
  insertEvent: `INSERT INTO verify_kit_outcome_events (session_id, outcome, source, occurred_at, next_delivery_at)
     VALUES (@sessionId, @outcome, @source, @now, @now)
     RETURNING event_id`,
  claimEvents: `UPDATE verify_kit_outcome_events SET lease_owner = @owner, lease_until = @leaseUntil, deliveries = deliveries + 1
     WHERE event_id IN (
       SELECT event_id FROM verify_kit_outcome_events
       WHERE delivered_at IS NULL AND next_delivery_at <= @now AND (lease_until IS NULL OR lease_until <= @now)
         AND (@ids IS NULL OR event_id IN (SELECT value FROM json_each(@ids)))
       ORDER BY next_delivery_at LIMIT @limit)
     RETURNING event_id, session_id, outcome, source, occurred_at, deliveries`,
  eventDelivered: `UPDATE verify_kit_outcome_events SET delivered_at = @now, lease_owner = NULL, lease_until = NULL
     WHERE event_id = @eventId AND lease_owner = @owner AND delivered_at IS NULL`,
  eventRetry: `UPDATE verify_kit_outcome_events SET next_delivery_at = @nextAttemptAt, lease_owner = NULL, lease_until = NULL
     WHERE event_id = @eventId AND lease_owner = @owner AND delivered_at IS NULL`,
  // The claim reads the due rows, then leases each by its key, in one IMMEDIATE transaction: no
  // other claim runs between the two. An UPDATE ... RETURNING of the rows costs over twice as much.
  dueToClaim: `SELECT ${COLUMNS} FROM verify_kit_attempts
     WHERE outcome = 'pending' AND next_check_at <= @now AND created_at > @minCreatedAt
       AND (lease_until IS NULL OR lease_until <= @now) AND (@platform IS NULL OR platform = @platform)
     ORDER BY next_check_at LIMIT @limit`,
  lease: 'UPDATE verify_kit_attempts SET lease_owner = ?, lease_until = ? WHERE start_seq = ?',
  reschedule: `UPDATE verify_kit_attempts SET next_check_at = @nextCheckAt, sweep_checks = sweep_checks + 1, lease_owner = NULL, lease_until = NULL
     WHERE session_id = @sessionId AND lease_owner = @owner AND outcome = 'pending'`,
  release: 'UPDATE verify_kit_attempts SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = ?',
  expire: `UPDATE verify_kit_attempts SET outcome = 'expired', finished_at = @now, lease_owner = NULL, lease_until = NULL
     WHERE outcome = 'pending' AND created_at <= @maxCreatedAt AND (lease_until IS NULL OR lease_until <= @now)
     RETURNING session_id`,
  budgetRow: 'SELECT spent, window_ends_at FROM verify_kit_start_budgets WHERE key = ?',
  // A distinct-members budget's counter, and whether @marker was counted in its window, in one
  // read. (The bound keys are fine after an ANALYZE: a lookup of one row by its whole primary key
  // is never planned again from sqlite_stat4.)
  budgetMember: `SELECT c.window_ends_at, m.window_ends_at IS c.window_ends_at AS counted
     FROM verify_kit_start_budgets AS c LEFT JOIN verify_kit_start_budgets AS m ON m.key = @marker
     WHERE c.key = @key`,
  // Spends one point unless the counter's open window is used up (then nothing changes: changes = 0).
  // A counter whose window has ended starts a new one at 1.
  spendBudget: `INSERT INTO verify_kit_start_budgets (key, spent, window_ends_at) VALUES (@key, 1, @newWindowEndsAt)
     ON CONFLICT (key) DO UPDATE SET
       spent = CASE WHEN window_ends_at > @now THEN spent + 1 ELSE 1 END,
       window_ends_at = CASE WHEN window_ends_at > @now THEN window_ends_at ELSE excluded.window_ends_at END
     WHERE window_ends_at <= @now OR spent < @points`,
  // A distinct value counted in a budget's window: a row of its own, ending with that window.
  markBudgetMember: `INSERT INTO verify_kit_start_budgets (key, spent, window_ends_at) VALUES (@marker, 1, @windowEndsAt)
     ON CONFLICT (key) DO UPDATE SET spent = 1, window_ends_at = excluded.window_ends_at`,
  // Only the window the refunded start was counted in: it ends after spentAt, and at most one
  // duration after it (a later window would end later).
  refundBudget: `UPDATE verify_kit_start_budgets SET spent = spent - 1
     WHERE key = @key AND spent > 0 AND window_ends_at > @spentAt AND window_ends_at <= @spentAt + @durationMs`,
  sweepPace:
    'SELECT rate_per_second, limit_per_second, paused_until, cut_at, tokens, tokens_at, reads_granted FROM verify_kit_sweep_pace WHERE id = 1',
  setSweepPace: `UPDATE verify_kit_sweep_pace SET rate_per_second = @ratePerSecond, limit_per_second = @limitPerSecond,
       paused_until = @pausedUntil, cut_at = @cutAt, tokens = @tokens, tokens_at = @tokensAt,
       reads_granted = @readsGranted WHERE id = 1`,
  deleteEndedBudgets: `DELETE FROM verify_kit_start_budgets WHERE key IN (
       SELECT key FROM verify_kit_start_budgets WHERE window_ends_at <= ? LIMIT ${ENDED_BUDGETS_PER_CLEANUP})`,
} as const;

const RECORD = `SELECT ${COLUMNS.replace(/(\w+)/g, 'a.$1')}, a.redacted_at, e.source AS outcome_source
  FROM verify_kit_attempts a LEFT JOIN verify_kit_outcome_events e ON e.session_id = a.session_id`;

/** Settled, finished before the cut-off, and with no outcome event still waiting for delivery. */
const SETTLED_BEFORE = `a.outcome != 'pending' AND a.finished_at < @before AND NOT EXISTS (
  SELECT 1 FROM verify_kit_outcome_events w WHERE w.session_id = a.session_id AND w.delivered_at IS NULL)`;

/** Support reads and retention (sqlite-reads-and-retention.ts). */
export const HOUSEKEEPING_SQL = {
  bySession: `${RECORD} WHERE a.session_id = ?`,
  list: `${RECORD}
     WHERE (@userRef IS NULL OR a.user_ref = @userRef) AND (@outcome IS NULL OR a.outcome = @outcome)
       AND (@createdFrom IS NULL OR a.created_at >= @createdFrom)
       AND (@createdBefore IS NULL OR a.created_at < @createdBefore)
     ORDER BY a.created_at DESC, a.start_seq DESC LIMIT @limit`,
  redact: `UPDATE verify_kit_attempts SET params = 'null', destination = NULL, service_user_ref = NULL,
       redacted_at = @now
     WHERE start_seq IN (SELECT a.start_seq FROM verify_kit_attempts a
       WHERE ${SETTLED_BEFORE} AND a.redacted_at IS NULL LIMIT @limit)`,
  doomed: `SELECT a.session_id FROM verify_kit_attempts a WHERE ${SETTLED_BEFORE} LIMIT @limit`,
  deleteEvent: 'DELETE FROM verify_kit_outcome_events WHERE session_id = ?',
  deleteAttempt: 'DELETE FROM verify_kit_attempts WHERE session_id = ?',
} as const;

const GRANT = `SELECT session_id, user_ref, scope, resource_key, browser_session, started_at, granted_at
     FROM verify_kit_grants`;
const NOT_REVOKED = `NOT EXISTS (SELECT 1 FROM verify_kit_grant_revocations AS r
         WHERE r.user_ref = g.user_ref AND r.scope IN (g.scope, '') AND r.revoked_at >= g.started_at)`;
const INTENT = `intent_id, user_ref, scope, browser_session, resource_key, method, path, fields, created_at,
       expires_at, consumed_at`;

/** Step-up grants and intents (sqlite-step-up.ts). */
export const STEP_UP_SQL = {
  // Never the grant's own row: its landing reloaded writes it again, and it is kept as it is.
  deleteOlderGrants: `DELETE FROM verify_kit_grants WHERE user_ref = @userRef AND scope = @scope
       AND resource_key = @resourceKey AND browser_session = @browserSession AND started_at <= @startedAt
       AND session_id <> @sessionId`,
  insertGrant: `INSERT INTO verify_kit_grants (session_id, user_ref, scope, resource_key, browser_session, started_at, granted_at)
     VALUES (@sessionId, @userRef, @scope, @resourceKey, @browserSession, @startedAt, @grantedAt)
     ON CONFLICT (session_id) DO NOTHING`,
  // Never a grant started at or before a revocation of its user and scope, or of all scopes (''):
  // a verification in flight at the revocation may write its grant afterwards.
  listGrants: `${GRANT} AS g WHERE g.user_ref = @userRef AND (@scope IS NULL OR g.scope = @scope)
       AND ${NOT_REVOKED}
     ORDER BY g.started_at DESC, g.granted_at DESC LIMIT @limit`,
  // The guard's reads, each down verify_kit_grants_session: a browser session's grants (of one
  // resource, or of all), never a window of the user's newest that other sessions can fill. Named:
  // without statistics (no ANALYZE) SQLite would walk all the user's grants in start order instead.
  listResourceGrants: `${GRANT} AS g INDEXED BY verify_kit_grants_session WHERE g.user_ref = @userRef AND g.scope = @scope
       AND g.browser_session = @browserSession AND g.resource_key = @resourceKey
       AND g.started_at >= @startedSince AND g.granted_at >= @grantedSince AND ${NOT_REVOKED}
     ORDER BY g.started_at DESC, g.granted_at DESC LIMIT @limit`,
  listSessionGrants: `${GRANT} AS g INDEXED BY verify_kit_grants_session WHERE g.user_ref = @userRef
       AND g.scope = @scope AND g.browser_session = @browserSession
       AND g.started_at >= @startedSince AND g.granted_at >= @grantedSince AND ${NOT_REVOKED}
     ORDER BY g.started_at DESC, g.granted_at DESC LIMIT @limit`,
  revokeGrants: 'DELETE FROM verify_kit_grants WHERE user_ref = @userRef AND (@scope IS NULL OR scope = @scope)',
  // The user's kept requests (of the scope) go with their grants: none runs after sign-out, no field stays.
  revokeIntents: 'DELETE FROM verify_kit_intents WHERE user_ref = @userRef AND (@scope IS NULL OR scope = @scope)',
  recordRevocation: `INSERT INTO verify_kit_grant_revocations (user_ref, scope, revoked_at)
     VALUES (@userRef, coalesce(@scope, ''), @now)
     ON CONFLICT (user_ref, scope) DO UPDATE SET revoked_at = max(revoked_at, excluded.revoked_at)`,
  deleteExpiredIntents: 'DELETE FROM verify_kit_intents WHERE user_ref = @userRef AND expires_at <= @createdAt',
  // Nothing is stored (changes = 0) while the user has @maxLive live intents.
  insertIntent: `INSERT INTO verify_kit_intents (${INTENT})
     SELECT @intentId, @userRef, @scope, @browserSession, @resourceKey, @method, @path, @fields, @createdAt,
       @expiresAt, NULL
     WHERE (SELECT count(*) FROM verify_kit_intents
       WHERE user_ref = @userRef AND consumed_at IS NULL AND expires_at > @createdAt) < @maxLive`,
  renewPageIntent: `UPDATE verify_kit_intents SET expires_at = @expiresAt
     WHERE user_ref = @userRef AND scope = @scope AND browser_session = @browserSession
       AND resource_key = @resourceKey AND method = 'GET' AND path = @path AND consumed_at IS NULL
       AND expires_at > @now
     RETURNING intent_id`,
  findIntent: `SELECT ${INTENT} FROM verify_kit_intents WHERE intent_id = ?`,
  // The fields go with the consumption: the handler that ran them was their only use.
  consumeIntent: `UPDATE verify_kit_intents SET consumed_at = @now, fields = 'null'
     WHERE intent_id = @intentId AND consumed_at IS NULL AND expires_at > @now`,
  purgeExpiredIntents: `DELETE FROM verify_kit_intents WHERE intent_id IN (
       SELECT intent_id FROM verify_kit_intents WHERE expires_at <= @now LIMIT @limit)`,
  purgeStaleGrants: `DELETE FROM verify_kit_grants WHERE session_id IN (
       SELECT session_id FROM verify_kit_grants WHERE started_at < @startedBefore LIMIT @limit)`,
} as const;

/** The SMS pumping counters (sqlite-pumping.ts); an hour is ms since the epoch / 3,600,000. */
export const PUMPING_SQL = {
  // The reading before a text in one statement: a row per key of @keys (a JSON array of
  // [dimension, key, need], not empty) in its order, with its counts of the last 24 hours as a JSON
  // array (CountsRead, sqlite-pumping.ts), the most verified in one of days 1 to 13 when `need`
  // (null otherwise: read earlier this hour), its live rule, and the address's countries without a
  // verification ("<address> " up to "<address>!": the space sorts just below "!"). Each key's
  // counts are one correlated aggregate over its own hours: joined and grouped, its hours' rows
  // went through a sort (about a third of the statement). No bound value stands alone beside a
  // column: after an ANALYZE (sqlite_stat4), SQLite prepares again, at every run, a statement
  // whose bare parameter constrains an index, and this plan never changes. A JavaScript number
  // binds as a REAL: cast, or the division keeps the hours apart.
  readPumping: `SELECT (SELECT count(*) FROM (SELECT key FROM verify_kit_pumping_counts
         WHERE dimension = 'address_country' AND key > @address || ' ' AND key < @address || '!'
           AND hour > @hour - 24 AND hour <= @hour + 0
         GROUP BY key HAVING sum(verified) = 0 AND sum(sent) > 0)) AS unverified_countries,
       (SELECT json_array(
           coalesce(sum(p.sent) FILTER (WHERE p.hour = @hour), 0),
           coalesce(sum(p.verified) FILTER (WHERE p.hour = @hour), 0),
           coalesce(sum(p.sent) FILTER (WHERE p.hour = @hour - 1), 0),
           coalesce(sum(p.verified) FILTER (WHERE p.hour = @hour - 1), 0),
           coalesce(sum(p.sent), 0),
           coalesce(sum(p.verified), 0),
           coalesce(sum(p.refused) FILTER (WHERE p.hour = @hour), 0),
           coalesce(sum(p.refused) FILTER (WHERE p.hour = @hour - 1), 0))
         FROM verify_kit_pumping_counts p
         WHERE p.dimension = k.value ->> 0 AND p.key = k.value ->> 1 AND p.hour > @hour - 24 AND p.hour <= @hour + 0
       ) AS counts,
       CASE WHEN k.value ->> 2 THEN (SELECT coalesce(max(v), 0) FROM (SELECT sum(m.verified) AS v
           FROM verify_kit_pumping_counts m
           WHERE m.dimension = k.value ->> 0 AND m.key = k.value ->> 1 AND m.hour > @hour - 336 AND m.hour <= @hour - 24
           GROUP BY (CAST(@hour AS INTEGER) - m.hour) / 24)) END AS max_past_day,
       r.rule, r.until, r.set_at
     FROM json_each(@keys) k
     LEFT JOIN verify_kit_pumping_rules r
       ON r.dimension = k.value ->> 0 AND r.key = k.value ->> 1 AND r.until > @now + 0
     ORDER BY k.key`,
  insertSend: `INSERT INTO verify_kit_pumping_sends (session_id, hour, keys) VALUES (@sessionId, @hour, @keys)
     ON CONFLICT (session_id) DO NOTHING`,
  // A send's counts in one statement for every key of @keys (the send's JSON array of
  // {dimension, key}) rather than one statement per key. `WHERE true` lets SQLite read the
  // ON CONFLICT as the upsert's.
  countSent: `INSERT INTO verify_kit_pumping_counts (dimension, key, hour, sent)
     SELECT value ->> 'dimension', value ->> 'key', @hour, 1 FROM json_each(@keys) WHERE true
     ON CONFLICT (dimension, key, hour) DO UPDATE SET sent = sent + 1`,
  // A reserved text never sent, given back (never below 0), one key at a time: a row by its whole
  // primary key is never planned again from sqlite_stat4. As one statement over a JSON array of
  // keys, an ANALYZE made while the hour was quiet had it walk the hour's rows of each dimension
  // (16 ms for an hour of 60 000 rows, under the write lock).
  uncountSent: `UPDATE verify_kit_pumping_counts SET sent = max(sent - 1, 0)
     WHERE dimension = @dimension AND key = @key AND hour = @hour`,
  // After a give-back: the key's row is deleted if it counts nothing. A refused start would
  // otherwise leave a row for each new key it named (a new block, user), kept 15 days.
  dropEmptyCount: `DELETE FROM verify_kit_pumping_counts
     WHERE dimension = @dimension AND key = @key AND hour = @hour AND sent = 0 AND verified = 0 AND refused = 0`,
  countRefused: `INSERT INTO verify_kit_pumping_counts (dimension, key, hour, refused)
     SELECT value ->> 'dimension', value ->> 'key', @hour, 1 FROM json_each(@keys) WHERE true
     ON CONFLICT (dimension, key, hour) DO UPDATE SET refused = refused + 1`,
  // Read before the write: a send counted already (or none) needs no write lock.
  sendToCount: 'SELECT 1 AS n FROM verify_kit_pumping_sends WHERE session_id = ? AND verified = 0',
  markSendVerified: `UPDATE verify_kit_pumping_sends SET verified = 1 WHERE session_id = ? AND verified = 0
     RETURNING hour, keys`,
  countVerified: `UPDATE verify_kit_pumping_counts SET verified = verified + 1
     WHERE dimension = @dimension AND key = @key AND hour = @hour`,
  // Attempts fulfilled since @since whose text is still counted unverified (through the settled index).
  fulfilledUncounted: `SELECT s.session_id FROM verify_kit_attempts a JOIN verify_kit_pumping_sends s ON s.session_id = a.session_id
     WHERE a.outcome != 'pending' AND a.finished_at >= @since AND a.outcome = 'fulfilled' AND s.verified = 0 LIMIT @limit`,
  insertDecision: `INSERT INTO verify_kit_pumping_decisions (decided_at, decision, reasons, country, block, address, user_ref)
     VALUES (@decidedAt, @decision, @reasons, @country, @block, @address, @userRef)`,
  listDecisions: `SELECT decided_at, decision, reasons, country, block, address, user_ref FROM verify_kit_pumping_decisions
     WHERE decided_at >= @since ORDER BY decided_at DESC, id DESC LIMIT @limit`,
  setRule: `INSERT INTO verify_kit_pumping_rules (dimension, key, rule, until, set_at)
     VALUES (@dimension, @key, @rule, @until, @setAt)
     ON CONFLICT (dimension, key) DO UPDATE SET rule = excluded.rule, until = excluded.until, set_at = excluded.set_at`,
  clearRule: 'DELETE FROM verify_kit_pumping_rules WHERE dimension = @dimension AND key = @key',
  listRules: `SELECT dimension, key, rule, until, set_at FROM verify_kit_pumping_rules WHERE until > ?
     ORDER BY set_at DESC`,
  keysThatMayTrip: `SELECT key FROM verify_kit_pumping_counts
     WHERE dimension = @dimension AND hour > @hour - 24 AND hour <= @hour GROUP BY key
     HAVING sum(sent) > sum(verified) OR sum(sent) = 0 OR coalesce(sum(refused) FILTER (WHERE hour >= @hour - 1), 0) > 0
     ORDER BY key`,
  countsByDay: `SELECT key, (CAST(@hour AS INTEGER) - hour) / 24 AS days_ago, sum(sent) AS sent, sum(verified) AS verified
     FROM verify_kit_pumping_counts WHERE dimension = @dimension AND hour > @hour - 24 * @days AND hour <= @hour
     GROUP BY key, days_ago ORDER BY key, days_ago`,
  purgeCounts: `DELETE FROM verify_kit_pumping_counts WHERE (dimension, key, hour) IN (
       SELECT dimension, key, hour FROM verify_kit_pumping_counts WHERE hour < @beforeHour LIMIT @limit)`,
  purgeSends: `DELETE FROM verify_kit_pumping_sends WHERE session_id IN (
       SELECT session_id FROM verify_kit_pumping_sends WHERE hour < @beforeHour LIMIT @limit)`,
  purgeDecisions: `DELETE FROM verify_kit_pumping_decisions WHERE id IN (
       SELECT id FROM verify_kit_pumping_decisions WHERE decided_at < @decisionsBefore LIMIT @limit)`,
  purgeRules: 'DELETE FROM verify_kit_pumping_rules WHERE until <= @now',
} as const;

/** The pumping counters' statements, prepared once. */
export type PumpingStatements = { readonly [Name in keyof typeof PUMPING_SQL]: Statement };

/** The store's statements, prepared once. */
export type Statements = { readonly [Name in keyof typeof SQL]: Statement };
/** The step-up statements, prepared once. */
export type StepUpStatements = { readonly [Name in keyof typeof STEP_UP_SQL]: Statement };
/** The housekeeping statements, prepared once. */
export type HousekeepingStatements = { readonly [Name in keyof typeof HOUSEKEEPING_SQL]: Statement };

/** Prepares every statement of `sql` on `db` (a statement that does not compile throws here, at creation). */
export function prepareAll<Sql extends Readonly<Record<string, string>>>(
  db: Database,
  sql: Sql,
): { readonly [Name in keyof Sql]: Statement } {
  const prepared = Object.entries(sql).map(([name, text]) => [name, db.prepare(text)] as const);
  return Object.fromEntries(prepared) as { readonly [Name in keyof Sql]: Statement };
}
