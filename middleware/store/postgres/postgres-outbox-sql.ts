/**
 * The outcome events' statements (postgres-outbox.ts): written with an outcome, leased for
 * delivery to the onOutcome hook, then delivered or tried again. Part of the store's statements
 * (postgres-sql.ts, which names each after `verify_kit_`).
 */
import { ATTEMPT } from './postgres-rows.ts';

export const OUTBOX_SQL = {
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
} as const;
