/**
 * The sweep's statements (postgres-sweep.ts, postgres-sweep-pace.ts): a read's failure, the claims,
 * the reschedules, the release of claims, the shared pace's row and the expiry. Part of the store's
 * statements (postgres-sql.ts, which names each after `verify_kit_`).
 */
import { ATTEMPT } from './postgres-rows.ts';

export const SWEEP_SQL = {
  markFailed: `UPDATE verify_kit_attempts
    SET outcome = 'failed', failure_reason = $2, finished_at = $3, lease_owner = NULL, lease_until = NULL
    WHERE session_id = $1 AND outcome = 'pending'
    RETURNING session_id`,
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
  // The one row, locked: every sweep process's change to the pace waits for the one before.
  lockSweepPace:
    'SELECT rate_per_second, limit_per_second, paused_until, cut_at, tokens, tokens_at, reads_granted FROM verify_kit_sweep_pace WHERE id = 1 FOR UPDATE',
  setSweepPace: `UPDATE verify_kit_sweep_pace SET rate_per_second = $1, limit_per_second = $2, paused_until = $3,
       cut_at = $4, tokens = $5, tokens_at = $6, reads_granted = $7 WHERE id = 1`,
  expire: `UPDATE verify_kit_attempts SET outcome = 'expired', finished_at = $1, lease_owner = NULL, lease_until = NULL
    WHERE outcome = 'pending' AND created_at <= $2 AND (lease_until IS NULL OR lease_until <= $1)
    RETURNING session_id`,
} as const;
