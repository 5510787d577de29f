/**
 * The fulfil path's statements (postgres-fulfil.ts): the marks of a fulfilment, alone or a group's,
 * with the ordering they decide (an older attempt never applies after a newer one), and the two
 * routines that take a pair's lock and mark in one round trip. Part of the store's statements
 * (postgres-sql.ts, which names each after `verify_kit_`).
 */
import { routine } from './postgres-routine.ts';
import { ATTEMPT } from './postgres-rows.ts';

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

export const MARK_ONE = routine(
  'verify_kit_mark_fulfilled',
  'text, bigint, boolean',
  `(p_session_id TEXT, p_now BIGINT, p_latest BOOLEAN)
      RETURNS TABLE (role TEXT, ord INTEGER, attempt TEXT) LANGUAGE plpgsql VOLATILE AS $fn$${MARK_ONE_BODY}
      $fn$`,
);
export const MARK_GROUP = routine(
  'verify_kit_mark_group',
  'json, text[], text[]',
  `(p_requests JSON, p_users TEXT[], p_actions TEXT[])
      RETURNS TABLE (role TEXT, ord INTEGER, attempt TEXT) LANGUAGE plpgsql VOLATILE AS $fn$${MARK_GROUP_BODY}
      $fn$`,
);
const MARK_ONE_ROUTINE = MARK_ONE.name;
const MARK_GROUP_ROUTINE = MARK_GROUP.name;

/** The marks of a fulfilment, and what an attempt ordered 'latest' is measured against. */
export const FULFIL_SQL = {
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
} as const;
