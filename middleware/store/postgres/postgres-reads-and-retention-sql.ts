/**
 * The support reads' and retention's statements (postgres-reads-and-retention.ts). Part of the
 * store's statements (postgres-sql.ts, which names each after `verify_kit_`).
 */
import { COLUMNS } from './postgres-rows.ts';

/** An attempt with the source of its outcome event, for support reads. */
const RECORD = `SELECT ${COLUMNS.replace(/(\w+)/g, 'a.$1')}, a.redacted_at, e.source AS outcome_source
  FROM verify_kit_attempts a LEFT JOIN verify_kit_outcome_events e ON e.session_id = a.session_id`;

/** Settled, finished before the cut-off ($1), and with no outcome event still waiting for delivery. */
const SETTLED_BEFORE = `a.outcome <> 'pending' AND a.finished_at < $1 AND NOT EXISTS (
  SELECT 1 FROM verify_kit_outcome_events w WHERE w.session_id = a.session_id AND w.delivered_at IS NULL)`;

export const READS_AND_RETENTION_SQL = {
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
