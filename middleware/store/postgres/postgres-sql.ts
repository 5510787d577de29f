/**
 * Every statement of the PostgreSQL store, composed from its concerns' modules, and the routines it
 * creates (its migrations are in postgres-schema.ts). Each statement runs as a named prepared
 * statement: a key here is its name after `verify_kit_`. Attempts come back as one JSON column
 * (ATTEMPT, postgres-rows.ts), except on the support reads (RECORD). The statements by concern:
 * postgres-fulfil-sql.ts, postgres-sweep-sql.ts, postgres-outbox-sql.ts, postgres-budgets-sql.ts,
 * postgres-reads-and-retention-sql.ts, postgres-step-up-sql.ts, postgres-pumping-sql.ts.
 */
import { BUDGETS_SQL, CONSUME_BUDGETS } from './postgres-budgets-sql.ts';
import { FULFIL_SQL, MARK_GROUP, MARK_ONE } from './postgres-fulfil-sql.ts';
import { OUTBOX_SQL } from './postgres-outbox-sql.ts';
import { COUNT_PUMPING, LOCK_PUMPING, PUMPING_SQL, READ_PUMPING, SURE_COUNT_PUMPING } from './postgres-pumping-sql.ts';
import { READS_AND_RETENTION_SQL } from './postgres-reads-and-retention-sql.ts';
import { ATTEMPT } from './postgres-rows.ts';
import { STEP_UP_SQL } from './postgres-step-up-sql.ts';
import { SWEEP_SQL } from './postgres-sweep-sql.ts';

/**
 * The store's routines. They are not migrations: the store creates each one when it starts, if it
 * is missing, under a name that carries a hash of its whole definition, header and body
 * (postgres-routine.ts). Instances of two kit versions on one
 * database then each call their own, and a routine can never differ from the code that calls it.
 */
export const ROUTINES = [
  READ_PUMPING,
  COUNT_PUMPING,
  LOCK_PUMPING,
  SURE_COUNT_PUMPING,
  CONSUME_BUDGETS,
  MARK_ONE,
  MARK_GROUP,
] as const;

const INSERT_ATTEMPT = `INSERT INTO verify_kit_attempts
      (state, session_id, user_ref, action, params, return_to, sensitivity, platform, created_at, next_check_at,
       destination, service_user_ref, client_id)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`;

export const SQL = {
  ...STEP_UP_SQL,
  ...PUMPING_SQL,
  insert: INSERT_ATTEMPT,
  // The attempt and the record of its text's send ($14 hour, $15 dimensions, $16 keys, sorted), as
  // attachSend writes it, in one statement (postgres-start-writes.ts).
  insertWithSend: `WITH send AS (
      INSERT INTO verify_kit_pumping_sends (session_id, hour, dimensions, keys) VALUES ($2, $14, $15, $16)
      ON CONFLICT (session_id) DO NOTHING)
    ${INSERT_ATTEMPT}`,
  byState: `SELECT ${ATTEMPT} FROM verify_kit_attempts WHERE state = $1`,
  bySession: `SELECT ${ATTEMPT} FROM verify_kit_attempts WHERE session_id = $1`,
  ...FULFIL_SQL,
  ...SWEEP_SQL,
  ...OUTBOX_SQL,
  ...BUDGETS_SQL,
  ...READS_AND_RETENTION_SQL,
} as const;

/** The name of a statement of the store. */
export type StatementName = keyof typeof SQL;
