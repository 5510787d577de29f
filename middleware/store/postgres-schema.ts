/**
 * The kit's PostgreSQL schema, versioned in its own table. Migrations only ever append. Several
 * app instances may start at once: each migration run holds a transaction-scoped advisory lock,
 * so exactly one of them creates the tables and the others then find them at the current version.
 */
import type { Pool } from 'pg';

/** Chosen once for this kit ("vkit" in ASCII); only the kit's migrations take it. */
const MIGRATION_LOCK = 0x766b6974;

const MIGRATIONS: readonly string[] = [
  // 1: one attempt per state; session_id unique so fulfilment can be keyed by it. Times are
  // milliseconds since the epoch, as the SQLite store keeps them.
  // start_seq is the start order no clock can tie (newest started = highest); destination is the
  // number the code was sent to.
  `CREATE TABLE verify_kit_attempts (
     start_seq      BIGSERIAL UNIQUE,
     state          TEXT PRIMARY KEY,
     session_id     TEXT NOT NULL UNIQUE,
     user_ref       TEXT NOT NULL,
     action         TEXT NOT NULL,
     params         TEXT NOT NULL,
     destination    TEXT,
     return_to      TEXT NOT NULL,
     sensitivity    TEXT NOT NULL CHECK (sensitivity IN ('normal', 'sensitive')),
     platform       TEXT NOT NULL CHECK (platform IN ('web', 'mobile')),
     created_at     BIGINT NOT NULL,
     outcome        TEXT NOT NULL DEFAULT 'pending'
                    CHECK (outcome IN ('pending', 'fulfilled', 'failed', 'expired', 'superseded')),
     failure_reason TEXT,
     fulfilled_at   BIGINT,
     finished_at    BIGINT,
     superseded_by  TEXT,
     next_check_at  BIGINT NOT NULL,
     sweep_checks   INTEGER NOT NULL DEFAULT 0,
     lease_owner    TEXT,
     lease_until    BIGINT
   );
   CREATE INDEX verify_kit_attempts_due ON verify_kit_attempts (next_check_at) WHERE outcome = 'pending';
   CREATE INDEX verify_kit_attempts_age ON verify_kit_attempts (created_at) WHERE outcome = 'pending';
   CREATE INDEX verify_kit_attempts_lease ON verify_kit_attempts (lease_owner) WHERE lease_owner IS NOT NULL;
   CREATE INDEX verify_kit_attempts_intent ON verify_kit_attempts (user_ref, action, start_seq);
   -- The outbox of outcome events for the after-commit hook: one per settled attempt, written in
   -- the transaction that settles it.
   CREATE TABLE verify_kit_outcome_events (
     event_id         BIGSERIAL PRIMARY KEY,
     session_id       TEXT NOT NULL UNIQUE,
     outcome          TEXT NOT NULL CHECK (outcome IN ('fulfilled', 'failed', 'expired', 'superseded')),
     source           TEXT NOT NULL CHECK (source IN ('landing', 'mobile', 'sweep')),
     occurred_at      BIGINT NOT NULL,
     delivered_at     BIGINT,
     deliveries       INTEGER NOT NULL DEFAULT 0,
     next_delivery_at BIGINT NOT NULL,
     lease_owner      TEXT,
     lease_until      BIGINT
   );
   CREATE INDEX verify_kit_outcome_events_due ON verify_kit_outcome_events (next_delivery_at)
     WHERE delivered_at IS NULL;
   -- rate-limiter-flexible's own table for the shared start limits (its layout, created here so
   -- that concurrent starts never race to create it).
   CREATE TABLE verify_kit_rate_limits (
     key    VARCHAR(255) PRIMARY KEY,
     points INTEGER NOT NULL DEFAULT 0,
     expire BIGINT
   );`,

  // 2: retention (when an attempt's params and destination were removed) and support-screen reads.
  `ALTER TABLE verify_kit_attempts ADD COLUMN redacted_at BIGINT;
   CREATE INDEX verify_kit_attempts_settled ON verify_kit_attempts (finished_at) WHERE outcome <> 'pending';
   CREATE INDEX verify_kit_attempts_user ON verify_kit_attempts (user_ref, created_at);`,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** Brings the kit's tables to SCHEMA_VERSION; safe to run from several processes at once. */
export async function migrate(pool: Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query('CREATE TABLE IF NOT EXISTS verify_kit_schema (version INTEGER NOT NULL)');
    const { rows } = await client.query<{ version: number }>('SELECT version FROM verify_kit_schema');
    const current = rows[0]?.version ?? 0;
    if (current > SCHEMA_VERSION) {
      throw new Error(
        `The database's verify kit schema is version ${current}, newer than this kit's ${SCHEMA_VERSION}: ` +
          'upgrade the kit.',
      );
    }
    for (const migration of MIGRATIONS.slice(current, SCHEMA_VERSION)) await client.query(migration);
    if (rows.length === 0) await client.query('INSERT INTO verify_kit_schema (version) VALUES ($1)', [SCHEMA_VERSION]);
    else await client.query('UPDATE verify_kit_schema SET version = $1', [SCHEMA_VERSION]);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}
