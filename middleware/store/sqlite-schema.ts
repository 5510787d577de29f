/**
 * The kit's SQLite schema, versioned in its own table (PRAGMA user_version belongs to the
 * integrator, whose tables may share the file). Migrations only ever append.
 */
import type { Database } from 'better-sqlite3';

const MIGRATIONS: readonly string[] = [
  // 1: one attempt per state; session_id unique so fulfilment can be keyed by it.
  `CREATE TABLE verify_kit_attempts (
     state          TEXT PRIMARY KEY,
     session_id     TEXT NOT NULL UNIQUE,
     user_ref       TEXT NOT NULL,
     action         TEXT NOT NULL,
     params         TEXT NOT NULL,
     return_to      TEXT NOT NULL,
     sensitivity    TEXT NOT NULL CHECK (sensitivity IN ('normal', 'sensitive')),
     platform       TEXT NOT NULL CHECK (platform IN ('web', 'mobile')),
     created_at     INTEGER NOT NULL,
     outcome        TEXT NOT NULL DEFAULT 'pending' CHECK (outcome IN ('pending', 'fulfilled', 'failed', 'expired')),
     failure_reason TEXT,
     fulfilled_at   INTEGER,
     finished_at    INTEGER,
     next_check_at  INTEGER NOT NULL,
     sweep_checks   INTEGER NOT NULL DEFAULT 0,
     lease_owner    TEXT,
     lease_until    INTEGER
   ) STRICT;
   CREATE INDEX verify_kit_attempts_due ON verify_kit_attempts (next_check_at) WHERE outcome = 'pending';
   CREATE INDEX verify_kit_attempts_age ON verify_kit_attempts (created_at) WHERE outcome = 'pending';`,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** Brings the kit's tables to SCHEMA_VERSION; safe to run from several processes at once. */
export function migrate(db: Database): void {
  db.exec('CREATE TABLE IF NOT EXISTS verify_kit_schema (version INTEGER NOT NULL) STRICT');
  const run = db.transaction(() => {
    const row = db.prepare('SELECT version FROM verify_kit_schema').get() as { version: number } | undefined;
    const current = row?.version ?? 0;
    if (current > SCHEMA_VERSION) {
      throw new Error(
        `The database's verify kit schema is version ${current}, newer than this kit's ${SCHEMA_VERSION}: upgrade the kit.`,
      );
    }
    for (let version = current + 1; version <= SCHEMA_VERSION; version++) db.exec(MIGRATIONS[version - 1]!);
    if (row === undefined) db.prepare('INSERT INTO verify_kit_schema (version) VALUES (?)').run(SCHEMA_VERSION);
    else db.prepare('UPDATE verify_kit_schema SET version = ?').run(SCHEMA_VERSION);
  });
  run.immediate();
}
