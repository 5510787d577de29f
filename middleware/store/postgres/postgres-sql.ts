/**
 * Every statement of the PostgreSQL store, and the routines it creates, in one place (its
 * migrations are in postgres-schema.ts). Each statement runs as a named prepared statement: a key
 * here is its name after `verify_kit_`. Attempts come back as one JSON column (ATTEMPT,
 * postgres-rows.ts), except on the support reads (RECORD).
 */
import { routine } from './postgres-routine.ts';
import { PUMPING_SQL, READ_PUMPING, RESERVE_PUMPING } from './postgres-pumping-sql.ts';
import { ATTEMPT, COLUMNS } from './postgres-rows.ts';

/** Ended start budget counters are deleted in batches of at most this many. */
export const ENDED_BUDGETS_PER_CLEANUP = 1000;

/**
 * How far ahead of the database's clock an instance's clock may count start budgets. Windows are
 * shared by every instance, so one whose clock runs ahead would end live windows early (a fresh
 * budget) and delete counters others still use: its time is cut to the database's plus this.
 */
export const BUDGET_CLOCK_AHEAD_MS = 1000;

/** The caller's time ($n), never later than the database's clock plus BUDGET_CLOCK_AHEAD_MS. */
const budgetNow = (n: number) =>
  `LEAST($${n}::bigint, (extract(epoch FROM clock_timestamp()) * 1000)::bigint + ${BUDGET_CLOCK_AHEAD_MS})`;

/** An attempt with the source of its outcome event, for support reads. */
const RECORD = `SELECT ${COLUMNS.replace(/(\w+)/g, 'a.$1')}, a.redacted_at, e.source AS outcome_source
  FROM verify_kit_attempts a LEFT JOIN verify_kit_outcome_events e ON e.session_id = a.session_id`;

/** Settled, finished before the cut-off ($1), and with no outcome event still waiting for delivery. */
const SETTLED_BEFORE = `a.outcome <> 'pending' AND a.finished_at < $1 AND NOT EXISTS (
  SELECT 1 FROM verify_kit_outcome_events w WHERE w.session_id = a.session_id AND w.delivered_at IS NULL)`;

/**
 * With `latest`: "an older attempt must never be applied after a newer one of the same user and
 * action was applied", so marking attempt `a` is refused when a newer one is already fulfilled. The
 * user's newer attempts are found first (OFFSET 0 keeps that a separate step, on the user's few
 * rows): given `outcome = 'fulfilled'` directly, the planner may walk the settled-attempts index
 * instead, whose statistics say it is empty while a sweep fills it, one full scan per fulfilment.
 */
const newerApplied = (latest: string) => `${latest} AND EXISTS (
          SELECT 1 FROM (
            SELECT n.outcome FROM verify_kit_attempts AS n
            WHERE n.user_ref = a.user_ref AND n.action = a.action AND n.start_seq > a.start_seq OFFSET 0) AS newer
          WHERE newer.outcome = 'fulfilled')`;

/**
 * After a `marked` CTE (session_id, user_ref, action, start_seq, ord, latest, now): the user's older
 * pending attempts of the action are settled as superseded in the same statement (they must never
 * apply after the marked one). Only those come back whole; a marked one is the caller's.
 */
const SUPERSEDE_OLDER = `older AS (
      UPDATE verify_kit_attempts AS o
      SET outcome = 'superseded', superseded_by = m.session_id, finished_at = m.now, lease_owner = NULL,
        lease_until = NULL
      FROM marked AS m
      WHERE m.latest AND o.user_ref = m.user_ref AND o.action = m.action AND o.start_seq < m.start_seq
        AND o.outcome = 'pending'
      RETURNING o.*, m.ord)
    SELECT 'fulfilled' AS role, ord, NULL AS attempt FROM marked
    UNION ALL SELECT 'superseded', ord, ${ATTEMPT} FROM older`;

/** The advisory lock key of an attempt's (user, action) pair; every lock on a pair uses this one. */
const INTENT_LOCK_KEY = (alias: string) => `hashtextextended(${alias}.user_ref || chr(31) || ${alias}.action, 0)`;

/**
 * A round of a group in one statement, its requests a JSON array (`list`: ord, from 1; session_id;
 * latest: ordered 'latest'; now), at most one per user and action (the caller's rounds). JSON
 * rather than arrays: an array's length is seen when a plan is made for one call's values, so a
 * batch of one would be planned again on every call instead of reusing the prepared plan.
 * The rows are found through `= ANY (ARRAY(...))`, which the planner counts as a few rows: joined
 * to the JSON alone (counted as 100) it scanned a small table whole.
 */
const markGroup = (list: string) => `WITH r AS (
      SELECT * FROM json_to_recordset(${list}) AS r (ord integer, session_id text, latest boolean, now bigint)),
    marked AS (
      UPDATE verify_kit_attempts AS a
      SET outcome = 'fulfilled', fulfilled_at = r.now, finished_at = r.now, lease_owner = NULL, lease_until = NULL
      FROM r
      WHERE a.session_id = ANY (ARRAY(SELECT session_id FROM r)) AND a.session_id = r.session_id
        AND a.outcome = 'pending' AND NOT (${newerApplied('r.latest')})
      RETURNING a.session_id, a.user_ref, a.action, a.start_seq, r.ord, r.latest, r.now),
    ${SUPERSEDE_OLDER}`;

/**
 * Every pair's lock of a group (p_users, p_actions: those ordered 'latest'), then its first round's
 * mark (p_requests, as markGroup), in one round trip instead of two. The locks are taken in one
 * sorted order (OFFSET 0 keeps the sort below the locking), so two processes committing
 * overlapping groups queue instead of deadlocking; the mark reads after they are held (a VOLATILE
 * function's statements each take a fresh snapshot), as in MARK_ONE_BODY.
 */
const MARK_GROUP_BODY = `
#variable_conflict use_column
BEGIN
  PERFORM pg_advisory_xact_lock(k) FROM (
      SELECT DISTINCT ${INTENT_LOCK_KEY('a')} AS k
      FROM unnest(p_users, p_actions) AS a (user_ref, action) ORDER BY k OFFSET 0) AS keys;
  RETURN QUERY ${markGroup('p_requests')};
END`;

/**
 * The single mark ordered 'latest' (the landing's, the mobile completion's, a retried one) as a
 * routine, so that the pair's lock and the mark take one round trip instead of two. The mark must
 * read after the lock is held: a VOLATILE function's statements each take a fresh snapshot, so the
 * UPDATE below sees a newer attempt that committed while this one waited. The same decision as
 * markFulfilledGroup, with scalar parameters, whose plan is simpler than the group's JSON list.
 * Every call passes p_latest true (a mark ordered 'independent' is markFulfilledIndependent); the
 * branch stays in the body because the routine is named by a hash of its text: any edit names a
 * second routine beside the one existing databases hold.
 */
const MARK_ONE_BODY = `
#variable_conflict use_column
BEGIN
  IF p_latest THEN
    PERFORM pg_advisory_xact_lock(${INTENT_LOCK_KEY('a')}) FROM verify_kit_attempts AS a
      WHERE a.session_id = p_session_id;
  END IF;
  RETURN QUERY WITH marked AS (
      UPDATE verify_kit_attempts AS a
      SET outcome = 'fulfilled', fulfilled_at = p_now, finished_at = p_now, lease_owner = NULL, lease_until = NULL
      WHERE a.session_id = p_session_id AND a.outcome = 'pending' AND NOT (${newerApplied('p_latest')})
      RETURNING a.session_id, a.user_ref, a.action, a.start_seq, 1 AS ord, p_latest AS latest, p_now AS now),
    ${SUPERSEDE_OLDER};
END`;

const GRANT_COLUMNS = 'session_id, user_ref, scope, resource_key, browser_session, started_at, granted_at';
// Started at or before a revocation by the clocks, or before it in the store's start order: an
// instance whose clock runs ahead of the revoking one's gives a verification started before it a
// later start time. (A revocation an older kit recorded has no place in that order: its time alone.)
const NOT_REVOKED = `NOT EXISTS (SELECT 1 FROM verify_kit_grant_revocations AS r
         WHERE r.user_ref = g.user_ref AND r.scope IN (g.scope, '') AND (r.revoked_at >= g.started_at
           OR r.revoked_seq >= (SELECT a.start_seq FROM verify_kit_attempts AS a WHERE a.session_id = g.session_id)))`;
const INTENT_COLUMNS = `intent_id, user_ref, scope, browser_session, resource_key, method, path, fields, created_at,
  expires_at, consumed_at`;

/** Step-up grants and intents (postgres-step-up.ts). */
const STEP_UP_SQL = {
  deleteOlderGrants: `DELETE FROM verify_kit_grants WHERE user_ref = $1 AND scope = $2 AND resource_key = $3
     AND browser_session = $4 AND started_at <= $5`,
  insertGrant: `INSERT INTO verify_kit_grants (${GRANT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (session_id) DO NOTHING`,
  // Never a grant started at or before a revocation of its user and scope, or of all scopes (''):
  // a fulfilment may commit its grant after a revocation that committed while it ran.
  listGrants: `SELECT ${GRANT_COLUMNS} FROM verify_kit_grants AS g
     WHERE g.user_ref = $1 AND ($2::text IS NULL OR g.scope = $2) AND ${NOT_REVOKED}
     ORDER BY g.started_at DESC, g.granted_at DESC LIMIT $3`,
  // The guard's reads, each down verify_kit_grants_session: a browser session's grants (of one
  // resource, or of all), never a window of the user's newest that other sessions can fill.
  listResourceGrants: `SELECT ${GRANT_COLUMNS} FROM verify_kit_grants AS g
     WHERE g.user_ref = $1 AND g.scope = $2 AND g.browser_session = $3 AND g.resource_key = $4
       AND g.started_at >= $5 AND g.granted_at >= $6 AND ${NOT_REVOKED}
     ORDER BY g.started_at DESC, g.granted_at DESC LIMIT $7`,
  listSessionGrants: `SELECT ${GRANT_COLUMNS} FROM verify_kit_grants AS g
     WHERE g.user_ref = $1 AND g.scope = $2 AND g.browser_session = $3
       AND g.started_at >= $4 AND g.granted_at >= $5 AND ${NOT_REVOKED}
     ORDER BY g.started_at DESC, g.granted_at DESC LIMIT $6`,
  // The revocation is recorded, and the user's kept requests (of the scope) deleted, by the same
  // statement that deletes the grants: none runs after sign-out, no field stays.
  revokeGrants: `WITH revocation AS (
       INSERT INTO verify_kit_grant_revocations AS r (user_ref, scope, revoked_at, revoked_seq)
       SELECT $1, coalesce($2, ''), $3, CASE WHEN s.is_called THEN s.last_value ELSE 0 END
       FROM verify_kit_attempts_start_seq_seq AS s
       ON CONFLICT (user_ref, scope) DO UPDATE SET revoked_at = GREATEST(r.revoked_at, EXCLUDED.revoked_at),
         revoked_seq = GREATEST(r.revoked_seq, EXCLUDED.revoked_seq)),
     kept AS (DELETE FROM verify_kit_intents WHERE user_ref = $1 AND ($2::text IS NULL OR scope = $2))
     DELETE FROM verify_kit_grants WHERE user_ref = $1 AND ($2::text IS NULL OR scope = $2)`,
  // Taken before insertIntent and revokeGrants, in their transactions: one user's keeps queue, so each
  // counts the ones committed before it, and a revocation deletes every form kept before it (the
  // two-key form: a key space apart from the fulfilments' locks).
  lockUserIntents: `SELECT pg_advisory_xact_lock(hashtext('verify_kit_intents'), hashtext($1))`,
  // Nothing is stored (rowCount 0) while the user has $11 live intents (under lockUserIntents).
  insertIntent: `WITH expired AS (DELETE FROM verify_kit_intents WHERE user_ref = $2 AND expires_at <= $9)
     INSERT INTO verify_kit_intents (${INTENT_COLUMNS})
     SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, NULL
     WHERE (SELECT count(*) FROM verify_kit_intents
       WHERE user_ref = $2 AND consumed_at IS NULL AND expires_at > $9) < $11`,
  renewPageIntent: `UPDATE verify_kit_intents SET expires_at = $7
     WHERE user_ref = $1 AND scope = $2 AND browser_session = $3 AND resource_key = $4 AND method = 'GET'
       AND path = $5 AND consumed_at IS NULL AND expires_at > $6
     RETURNING intent_id`,
  findIntent: `SELECT ${INTENT_COLUMNS} FROM verify_kit_intents WHERE intent_id = $1`,
  // The fields go with the consumption: the handler that ran them was their only use. RETURNING
  // gives the values after the UPDATE: the fields come from the row it locked first.
  consumeIntent: `WITH kept AS (
       SELECT intent_id, fields FROM verify_kit_intents
       WHERE intent_id = $1 AND consumed_at IS NULL AND expires_at > $2 FOR UPDATE)
     UPDATE verify_kit_intents AS i SET consumed_at = $2, fields = 'null'
     FROM kept WHERE i.intent_id = kept.intent_id
     RETURNING i.intent_id, i.user_ref, i.scope, i.browser_session, i.resource_key, i.method, i.path, kept.fields,
       i.created_at, i.expires_at, i.consumed_at`,
  // Sweeps on several instances share the work (both purges).
  purgeStaleGrants: `DELETE FROM verify_kit_grants WHERE session_id IN (
       SELECT session_id FROM verify_kit_grants WHERE started_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
  purgeExpiredIntents: `DELETE FROM verify_kit_intents WHERE intent_id IN (
       SELECT intent_id FROM verify_kit_intents WHERE expires_at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
} as const;

/**
 * The store's routines. They are not migrations: the store creates each one when it starts, if it
 * is missing, under a name that carries a hash of its whole definition, header and body
 * (postgres-routine.ts). Instances of two kit versions on one
 * database then each call their own, and a routine can never differ from the code that calls it.
 */
/**
 * A start's budgets, all or nothing, as migration 12's routine counted them, but for one thing:
 * whether a member (a number the user tried) was counted already is read in a statement of its
 * own, after the counters' locks are held. Its snapshot then holds the marker of every start that
 * held them before; read in the locking statement, from a snapshot taken before it waited, a number
 * tried twice at once on two instances was counted twice.
 */
const CONSUME_BUDGETS_BODY = `
DECLARE
  c_budget INTEGER[];
  c_key TEXT[];
  c_spent INTEGER[];
  c_ends BIGINT[];
  c_open BOOLEAN[];
  c_points INTEGER[];
  c_member TEXT[];
  c_counted BOOLEAN[];
BEGIN
  WITH wanted AS (
    SELECT w.ord::INTEGER - 1 AS budget, w.key, w.points, w.duration_ms, w.member
    FROM unnest(p_keys, p_points, p_durations_ms, p_members) WITH ORDINALITY AS w(key, points, duration_ms, member, ord)),
  locked AS (
    INSERT INTO verify_kit_start_budgets AS b (key, spent, window_ends_at)
    SELECT wanted.key, 0, 0 FROM wanted ORDER BY wanted.key
    ON CONFLICT (key) DO UPDATE SET spent = b.spent
    RETURNING b.key, b.spent, b.window_ends_at)
  SELECT array_agg(wanted.budget ORDER BY wanted.budget), array_agg(wanted.key ORDER BY wanted.budget),
    array_agg(CASE WHEN locked.window_ends_at > p_now THEN locked.spent ELSE 0 END ORDER BY wanted.budget),
    array_agg(CASE WHEN locked.window_ends_at > p_now THEN locked.window_ends_at ELSE p_now + wanted.duration_ms END
      ORDER BY wanted.budget),
    array_agg(locked.window_ends_at > p_now ORDER BY wanted.budget),
    array_agg(wanted.points ORDER BY wanted.budget),
    array_agg(wanted.member ORDER BY wanted.budget)
  INTO c_budget, c_key, c_spent, c_ends, c_open, c_points, c_member
  FROM wanted JOIN locked ON locked.key = wanted.key;
  SELECT array_agg(x.member IS NOT NULL AND x.open AND EXISTS (
      SELECT 1 FROM verify_kit_start_budgets AS m
      WHERE m.key = 'seen:' || x.key || ':' || x.member AND m.window_ends_at = x.ends) ORDER BY x.ord)
  INTO c_counted
  FROM unnest(c_key, c_member, c_open, c_ends) WITH ORDINALITY AS x(key, member, open, ends, ord);
  -- All or nothing: spend every budget only when none is full (a member already counted spends nothing).
  IF NOT EXISTS (SELECT 1 FROM unnest(c_spent, c_points, c_counted) AS x(spent, points, counted)
      WHERE x.spent >= x.points AND NOT x.counted) THEN
    UPDATE verify_kit_start_budgets AS b SET spent = x.spent + 1, window_ends_at = x.ends
    FROM unnest(c_key, c_spent, c_ends, c_counted) AS x(key, spent, ends, counted)
    WHERE b.key = x.key AND NOT x.counted;
    INSERT INTO verify_kit_start_budgets AS b (key, spent, window_ends_at)
    SELECT 'seen:' || x.key || ':' || x.member, 1, x.ends
    FROM unnest(c_key, c_member, c_ends, c_counted) AS x(key, member, ends, counted)
    WHERE x.member IS NOT NULL AND NOT x.counted
    ON CONFLICT (key) DO UPDATE SET spent = 1, window_ends_at = excluded.window_ends_at;
  END IF;
  RETURN QUERY SELECT x.budget, x.ends - p_now
    FROM unnest(c_budget, c_spent, c_points, c_ends, c_counted) AS x(budget, spent, points, ends, counted)
    WHERE x.spent >= x.points AND NOT x.counted ORDER BY x.budget;
END`;
const CONSUME_BUDGETS = routine(
  'verify_kit_consume_start_budgets',
  'text[], integer[], bigint[], text[], bigint',
  `(p_keys TEXT[], p_points INTEGER[], p_durations_ms BIGINT[],
      p_members TEXT[], p_now BIGINT)
      RETURNS TABLE (refused_budget INTEGER, retry_after_ms BIGINT) LANGUAGE plpgsql VOLATILE AS $fn$${CONSUME_BUDGETS_BODY}
      $fn$`,
);
const MARK_ONE = routine(
  'verify_kit_mark_fulfilled',
  'text, bigint, boolean',
  `(p_session_id TEXT, p_now BIGINT, p_latest BOOLEAN)
      RETURNS TABLE (role TEXT, ord INTEGER, attempt TEXT) LANGUAGE plpgsql VOLATILE AS $fn$${MARK_ONE_BODY}
      $fn$`,
);
const MARK_GROUP = routine(
  'verify_kit_mark_group',
  'json, text[], text[]',
  `(p_requests JSON, p_users TEXT[], p_actions TEXT[])
      RETURNS TABLE (role TEXT, ord INTEGER, attempt TEXT) LANGUAGE plpgsql VOLATILE AS $fn$${MARK_GROUP_BODY}
      $fn$`,
);
const CONSUME_BUDGETS_ROUTINE = CONSUME_BUDGETS.name;
export const MARK_ONE_ROUTINE = MARK_ONE.name;
export const MARK_GROUP_ROUTINE = MARK_GROUP.name;
export const ROUTINES = [READ_PUMPING, RESERVE_PUMPING, CONSUME_BUDGETS, MARK_ONE, MARK_GROUP] as const;

export const SQL = {
  ...STEP_UP_SQL,
  ...PUMPING_SQL,
  // The SMS pumping counters' repair (postgres-pumping.ts): the texts of attempts fulfilled since
  // $1 still counted unverified (their count failed), at most $2, counted as markVerified does: a
  // send another caller counts meanwhile is read again once locked, and skipped. Several sends of
  // one key and hour add up in one update of its row.
  countFulfilledSends: `WITH unflushed AS (SELECT set_config('synchronous_commit', 'off', true)),
     done AS (
       UPDATE verify_kit_pumping_sends AS s SET verified = TRUE FROM unflushed
       WHERE NOT s.verified AND s.session_id IN (
         SELECT a.session_id FROM verify_kit_attempts a JOIN verify_kit_pumping_sends p ON p.session_id = a.session_id
         WHERE a.outcome <> 'pending' AND a.finished_at >= $1 AND a.outcome = 'fulfilled' AND NOT p.verified LIMIT $2)
       RETURNING s.hour, s.dimensions, s.keys),
     counted AS (
       UPDATE verify_kit_pumping_counts AS c SET verified = c.verified + t.n
       FROM (SELECT k.dimension, k.key, done.hour, count(*)::integer AS n
             FROM done CROSS JOIN LATERAL unnest(done.dimensions, done.keys) AS k(dimension, key)
             GROUP BY k.dimension, k.key, done.hour) t
       WHERE c.dimension = t.dimension AND c.key = t.key AND c.hour = t.hour)
     SELECT count(*)::integer AS marked FROM done`,
  insert: `INSERT INTO verify_kit_attempts
      (state, session_id, user_ref, action, params, return_to, sensitivity, platform, created_at, next_check_at,
       destination, service_user_ref, client_id)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
  byState: `SELECT ${ATTEMPT} FROM verify_kit_attempts WHERE state = $1`,
  bySession: `SELECT ${ATTEMPT} FROM verify_kit_attempts WHERE session_id = $1`,
  // Every fulfilment of one user's attempts of one action queues on its pair's advisory lock, in its
  // transaction, so the ordering decided by the marks cannot race (user_ref and action never change
  // once stored). The pairs come from the caller (as stored), so no row is looked up to find them.
  // One attempt ordered 'latest': its pair's lock and its mark, in MARK_ONE_ROUTINE.
  markFulfilled: `SELECT role, ord, attempt FROM ${MARK_ONE_ROUTINE}($1, $2, true)`,
  // One attempt ordered 'independent': no pair lock and nothing to supersede, so a plain statement
  // (the routine's lock and function call are work it does not need).
  markFulfilledIndependent: `UPDATE verify_kit_attempts
    SET outcome = 'fulfilled', fulfilled_at = $2, finished_at = $2, lease_owner = NULL, lease_until = NULL
    WHERE session_id = $1 AND outcome = 'pending'
    RETURNING 'fulfilled' AS role, 1 AS ord, NULL AS attempt`,
  // A later round of a group (its locks are held already): markGroup.
  markFulfilledGroup: markGroup('$1::json'),
  // A group's first round: every pair's lock and the round's mark, in MARK_GROUP_ROUTINE.
  markFulfilledGroupLocked: `SELECT role, ord, attempt FROM ${MARK_GROUP_ROUTINE}($1, $2, $3)`,
  newerFulfilled: `SELECT n.session_id FROM verify_kit_attempts AS a JOIN verify_kit_attempts AS n
      ON n.user_ref = a.user_ref AND n.action = a.action AND n.start_seq > a.start_seq AND n.outcome = 'fulfilled'
    WHERE a.session_id = $1 ORDER BY n.start_seq DESC LIMIT 1`,
  markSuperseded: `UPDATE verify_kit_attempts
    SET outcome = 'superseded', superseded_by = $2, finished_at = $3, lease_owner = NULL, lease_until = NULL
    WHERE session_id = $1 AND outcome = 'pending'
    RETURNING ${ATTEMPT}`,
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
  bySessions: `SELECT ${ATTEMPT} FROM verify_kit_attempts WHERE session_id = ANY($1::text[])`,
  eventDelivered: `UPDATE verify_kit_outcome_events SET delivered_at = $3, lease_owner = NULL, lease_until = NULL
    WHERE event_id = $1 AND lease_owner = $2 AND delivered_at IS NULL`,
  eventRetry: `UPDATE verify_kit_outcome_events SET next_delivery_at = $3, lease_owner = NULL, lease_until = NULL
    WHERE event_id = $1 AND lease_owner = $2 AND delivered_at IS NULL`,
  // SKIP LOCKED: two sweeps claiming at once take disjoint rows instead of queueing on each other.
  // The rows just locked are updated by their ctid, without a second lookup through the primary
  // key (about 7 µs less per claimed row). A due row that another process changed after this
  // statement began and left due (a late release of an expired lease) is locked in its new version,
  // which the update does not see: the claim comes back short and the run ends as if nothing more
  // were due; the next run takes that row.
  claimDue: `UPDATE verify_kit_attempts SET lease_owner = $1, lease_until = $2
    WHERE ctid = ANY (ARRAY(
      SELECT ctid FROM verify_kit_attempts
      WHERE outcome = 'pending' AND next_check_at <= $3 AND created_at > $4
        AND (lease_until IS NULL OR lease_until <= $3) AND ($6::text IS NULL OR platform = $6::text)
      ORDER BY next_check_at LIMIT $5
      FOR UPDATE SKIP LOCKED))
    RETURNING ${ATTEMPT}`,
  // The rows are locked first in session_id order (as a group's fulfilments are), so a reschedule
  // and a fulfilment of overlapping rows queue instead of deadlocking.
  reschedule: `WITH c AS (SELECT * FROM unnest($2::text[], $3::bigint[]) AS c (session_id, next_check_at)),
    locked AS (SELECT a.session_id FROM verify_kit_attempts AS a
      WHERE a.session_id = ANY ($2::text[]) AND a.lease_owner = $1 AND a.outcome = 'pending'
      ORDER BY a.session_id FOR UPDATE)
    UPDATE verify_kit_attempts AS a
    SET next_check_at = c.next_check_at, sweep_checks = a.sweep_checks + 1, lease_owner = NULL, lease_until = NULL
    FROM c JOIN locked ON locked.session_id = c.session_id
    WHERE a.session_id = c.session_id AND a.lease_owner = $1 AND a.outcome = 'pending'`,
  // Only pending attempts hold leases (every outcome clears its lease): found through the pending-by-due index.
  release: `UPDATE verify_kit_attempts SET lease_owner = NULL, lease_until = NULL
    WHERE outcome = 'pending' AND lease_owner = $1`,
  // One call, one transaction (the statement's): see the function in postgres-schema.ts.
  consumeStartBudgets: `SELECT refused_budget, retry_after_ms
    FROM ${CONSUME_BUDGETS_ROUTINE}($1, $2, $3, $4, ${budgetNow(5)})`,
  // SKIP LOCKED: never waits on a counter a start holds, so it cannot deadlock with one.
  // Counters locked in key order, as the consume routine locks them; only the window the refunded
  // start was counted in (it ends after spentAt, and at most one duration after it).
  refundStartBudgets: `WITH refund AS (
       SELECT b.key FROM verify_kit_start_budgets AS b
       JOIN unnest($1::text[], $2::bigint[]) AS x(key, duration_ms) ON x.key = b.key
       WHERE b.spent > 0 AND b.window_ends_at > $3 AND b.window_ends_at <= $3 + x.duration_ms
       ORDER BY b.key FOR UPDATE OF b)
     UPDATE verify_kit_start_budgets AS b SET spent = b.spent - 1 FROM refund WHERE b.key = refund.key`,
  // The one row, locked: every sweep process's change to the pace waits for the one before.
  lockSweepPace:
    'SELECT rate_per_second, limit_per_second, paused_until, cut_at, tokens, tokens_at, reads_granted FROM verify_kit_sweep_pace WHERE id = 1 FOR UPDATE',
  setSweepPace: `UPDATE verify_kit_sweep_pace SET rate_per_second = $1, limit_per_second = $2, paused_until = $3,
       cut_at = $4, tokens = $5, tokens_at = $6, reads_granted = $7 WHERE id = 1`,
  deleteEndedBudgets: `DELETE FROM verify_kit_start_budgets WHERE key IN (
      SELECT key FROM verify_kit_start_budgets WHERE window_ends_at <= ${budgetNow(1)}
      LIMIT ${ENDED_BUDGETS_PER_CLEANUP} FOR UPDATE SKIP LOCKED)`,
  expire: `UPDATE verify_kit_attempts SET outcome = 'expired', finished_at = $1, lease_owner = NULL, lease_until = NULL
    WHERE outcome = 'pending' AND created_at <= $2 AND (lease_until IS NULL OR lease_until <= $1)
    RETURNING session_id`,
  // Support reads and retention (postgres-reads-and-retention.ts).
  housekeeping_bySession: `${RECORD} WHERE a.session_id = $1`,
  housekeeping_list: `${RECORD}
    WHERE ($1::text IS NULL OR a.user_ref = $1) AND ($2::text IS NULL OR a.outcome = $2)
      AND ($3::bigint IS NULL OR a.created_at >= $3) AND ($4::bigint IS NULL OR a.created_at < $4)
    ORDER BY a.created_at DESC, a.start_seq DESC LIMIT $5`,
  redact: `UPDATE verify_kit_attempts SET params = 'null', destination = NULL, service_user_ref = NULL,
      redacted_at = $3
    WHERE session_id IN (SELECT a.session_id FROM verify_kit_attempts a
      WHERE ${SETTLED_BEFORE} AND a.redacted_at IS NULL LIMIT $2 FOR UPDATE SKIP LOCKED)`,
  // The delivered outcome events go with their attempts.
  delete: `WITH doomed AS (
      SELECT a.session_id FROM verify_kit_attempts a WHERE ${SETTLED_BEFORE} LIMIT $2 FOR UPDATE SKIP LOCKED),
    events AS (DELETE FROM verify_kit_outcome_events WHERE session_id IN (SELECT session_id FROM doomed))
    DELETE FROM verify_kit_attempts WHERE session_id IN (SELECT session_id FROM doomed)`,
} as const;

/** The name of a statement of the store. */
export type StatementName = keyof typeof SQL;
