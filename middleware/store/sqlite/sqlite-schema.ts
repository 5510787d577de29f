/**
 * The kit's SQLite schema, versioned in its own table (PRAGMA user_version belongs to the
 * integrator, whose tables may share the file). Migrations only ever append. Each says whether
 * the previous version's code still works after it (schema-versions.ts): a process of an older
 * kit starts on a file a newer one migrated, unless a breaking migration came in between.
 */
import type { Database } from 'better-sqlite3';
import { additive, breaking, type Migration, oldestUsableVersion, refuseUnlessUsable } from '../schema-versions.ts';
import { PUMPING_COUNTERS, PUMPING_REFUSED } from './sqlite-pumping-migrations.ts';

const MIGRATIONS: readonly Migration[] = [
  // 1: one attempt per state; session_id unique so fulfilment can be keyed by it (no kit before it
  // used these tables).
  breaking(`CREATE TABLE verify_kit_attempts (
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
   CREATE INDEX verify_kit_attempts_age ON verify_kit_attempts (created_at) WHERE outcome = 'pending';`),

  // 2: a start order that clocks cannot tie (start_seq, never reused), the destination the code
  // was sent to, the 'superseded' outcome (a CHECK cannot be altered in SQLite: the table is
  // rebuilt, every row kept, in start order), and the outbox of outcome events for onOutcome.
  // Breaking: code before it knows no 'superseded' outcome.
  breaking(`CREATE TABLE verify_kit_attempts_v2 (
     start_seq      INTEGER PRIMARY KEY AUTOINCREMENT,
     state          TEXT NOT NULL UNIQUE,
     session_id     TEXT NOT NULL UNIQUE,
     user_ref       TEXT NOT NULL,
     action         TEXT NOT NULL,
     params         TEXT NOT NULL,
     destination    TEXT,
     return_to      TEXT NOT NULL,
     sensitivity    TEXT NOT NULL CHECK (sensitivity IN ('normal', 'sensitive')),
     platform       TEXT NOT NULL CHECK (platform IN ('web', 'mobile')),
     created_at     INTEGER NOT NULL,
     outcome        TEXT NOT NULL DEFAULT 'pending'
                    CHECK (outcome IN ('pending', 'fulfilled', 'failed', 'expired', 'superseded')),
     failure_reason TEXT,
     fulfilled_at   INTEGER,
     finished_at    INTEGER,
     superseded_by  TEXT,
     next_check_at  INTEGER NOT NULL,
     sweep_checks   INTEGER NOT NULL DEFAULT 0,
     lease_owner    TEXT,
     lease_until    INTEGER
   ) STRICT;
   INSERT INTO verify_kit_attempts_v2 (state, session_id, user_ref, action, params, return_to, sensitivity, platform,
     created_at, outcome, failure_reason, fulfilled_at, finished_at, next_check_at, sweep_checks,
     lease_owner, lease_until)
   SELECT state, session_id, user_ref, action, params, return_to, sensitivity, platform,
     created_at, outcome, failure_reason, fulfilled_at, finished_at, next_check_at, sweep_checks,
     lease_owner, lease_until
   FROM verify_kit_attempts ORDER BY created_at, rowid;
   DROP TABLE verify_kit_attempts;
   ALTER TABLE verify_kit_attempts_v2 RENAME TO verify_kit_attempts;
   CREATE INDEX verify_kit_attempts_due ON verify_kit_attempts (next_check_at) WHERE outcome = 'pending';
   CREATE INDEX verify_kit_attempts_age ON verify_kit_attempts (created_at) WHERE outcome = 'pending';
   CREATE INDEX verify_kit_attempts_intent ON verify_kit_attempts (user_ref, action, start_seq);
   CREATE TABLE verify_kit_outcome_events (
     event_id         INTEGER PRIMARY KEY AUTOINCREMENT,
     session_id       TEXT NOT NULL UNIQUE,
     outcome          TEXT NOT NULL CHECK (outcome IN ('fulfilled', 'failed', 'expired', 'superseded')),
     source           TEXT NOT NULL CHECK (source IN ('landing', 'mobile', 'sweep')),
     occurred_at      INTEGER NOT NULL,
     delivered_at     INTEGER,
     deliveries       INTEGER NOT NULL DEFAULT 0,
     next_delivery_at INTEGER NOT NULL,
     lease_owner      TEXT,
     lease_until      INTEGER
   ) STRICT;
   CREATE INDEX verify_kit_outcome_events_due ON verify_kit_outcome_events (next_delivery_at)
     WHERE delivered_at IS NULL;`),

  // 3: retention (when an attempt's params and destination were removed) and support-screen reads.
  additive(`ALTER TABLE verify_kit_attempts ADD COLUMN redacted_at INTEGER;
   CREATE INDEX verify_kit_attempts_settled ON verify_kit_attempts (finished_at) WHERE outcome != 'pending';
   CREATE INDEX verify_kit_attempts_user ON verify_kit_attempts (user_ref, created_at);`),

  // 4: the start budgets, all counted in one transaction (consumeStartBudgets). A counter whose
  // window has ended counts as empty until it is deleted. The old per-budget table
  // (verify_kit_rate_limits, rate-limiter-flexible's) is left for instances of an older kit
  // still running beside this one; nothing writes it any more.
  // The (user_ref, created_at) index goes: support-screen lists filter by optional parameters,
  // which SQLite's planner cannot match to it (EXPLAIN QUERY PLAN: SCAN), while every start paid
  // for one more random index write. Additive: no query of older code names that index.
  additive(`CREATE TABLE verify_kit_start_budgets (
     key            TEXT PRIMARY KEY,
     spent          INTEGER NOT NULL,
     window_ends_at INTEGER NOT NULL
   ) STRICT, WITHOUT ROWID;
   DROP INDEX IF EXISTS verify_kit_attempts_user;`),

  // 5: start_seq as a plain rowid, without AUTOINCREMENT, whose sequence table every start wrote
  // as one more page. A new attempt still takes the highest start_seq plus one, so it is newer
  // than every stored attempt; a number comes back only after the newest attempt was deleted, and
  // retention deletes only settled attempts, none of which is ever compared again. The table is
  // rebuilt (AUTOINCREMENT cannot be dropped in place), every row and its start_seq kept.
  // Additive: every column older code reads and writes is kept, and no query of it names an index.
  // The pending-by-age index is not rebuilt: every start wrote it and every outcome deleted from
  // it, for the sweep's one expiry query per run, which now scans the pending-by-due index instead
  // (pending attempts only: they settle or expire within a day).
  additive(`CREATE TABLE verify_kit_attempts_v5 (
     start_seq      INTEGER PRIMARY KEY,
     state          TEXT NOT NULL UNIQUE,
     session_id     TEXT NOT NULL UNIQUE,
     user_ref       TEXT NOT NULL,
     action         TEXT NOT NULL,
     params         TEXT NOT NULL,
     destination    TEXT,
     return_to      TEXT NOT NULL,
     sensitivity    TEXT NOT NULL CHECK (sensitivity IN ('normal', 'sensitive')),
     platform       TEXT NOT NULL CHECK (platform IN ('web', 'mobile')),
     created_at     INTEGER NOT NULL,
     outcome        TEXT NOT NULL DEFAULT 'pending'
                    CHECK (outcome IN ('pending', 'fulfilled', 'failed', 'expired', 'superseded')),
     failure_reason TEXT,
     fulfilled_at   INTEGER,
     finished_at    INTEGER,
     superseded_by  TEXT,
     next_check_at  INTEGER NOT NULL,
     sweep_checks   INTEGER NOT NULL DEFAULT 0,
     lease_owner    TEXT,
     lease_until    INTEGER,
     redacted_at    INTEGER
   ) STRICT;
   INSERT INTO verify_kit_attempts_v5 (start_seq, state, session_id, user_ref, action, params, destination, return_to,
     sensitivity, platform, created_at, outcome, failure_reason, fulfilled_at, finished_at, superseded_by,
     next_check_at, sweep_checks, lease_owner, lease_until, redacted_at)
   SELECT start_seq, state, session_id, user_ref, action, params, destination, return_to,
     sensitivity, platform, created_at, outcome, failure_reason, fulfilled_at, finished_at, superseded_by,
     next_check_at, sweep_checks, lease_owner, lease_until, redacted_at
   FROM verify_kit_attempts;
   DROP TABLE verify_kit_attempts;
   ALTER TABLE verify_kit_attempts_v5 RENAME TO verify_kit_attempts;
   CREATE INDEX verify_kit_attempts_due ON verify_kit_attempts (next_check_at) WHERE outcome = 'pending';
   CREATE INDEX verify_kit_attempts_intent ON verify_kit_attempts (user_ref, action, start_seq);
   CREATE INDEX verify_kit_attempts_settled ON verify_kit_attempts (finished_at) WHERE outcome != 'pending';`),

  // 6: the userRef the service was sent, when it is not user_ref itself: for an action that proves
  // the destination, a keyed HMAC of the user and the number, so a passkey enrolled for another
  // number never verifies this one. user_ref stays the integrator's user for ordering and reads.
  // Breaking: code before it compares the userRef the service echoes with user_ref, so it refuses
  // every attempt started with a bound service userRef.
  breaking(`ALTER TABLE verify_kit_attempts ADD COLUMN service_user_ref TEXT;`),

  // 7: the sweep's shared pace (sweep/pacing.ts), one row: how fast every sweep process together
  // may read statuses after the service answered 429, and their shared bucket of read permits.
  additive(`CREATE TABLE verify_kit_sweep_pace (
     id              INTEGER PRIMARY KEY CHECK (id = 1),
     rate_per_second REAL,
     limit_per_second REAL,
     paused_until    INTEGER NOT NULL,
     cut_at          INTEGER NOT NULL,
     tokens          REAL NOT NULL,
     tokens_at       INTEGER NOT NULL
   ) STRICT;
   INSERT INTO verify_kit_sweep_pace VALUES (1, NULL, NULL, 0, 0, 0, 0);`),

  // 8: step-up (requireRecentVerification): grants, written by the fulfil path in the attempt's own
  // transaction (one per verified attempt, keyed by its session), and the guarded requests kept
  // server-side while their user verifies (consumed at most once).
  additive(`CREATE TABLE verify_kit_grants (
     session_id      TEXT PRIMARY KEY,
     user_ref        TEXT NOT NULL,
     scope           TEXT NOT NULL,
     resource_key    TEXT NOT NULL,
     browser_session TEXT NOT NULL,
     started_at      INTEGER NOT NULL,
     granted_at      INTEGER NOT NULL
   ) STRICT;
   CREATE INDEX verify_kit_grants_user ON verify_kit_grants (user_ref, scope, started_at);
   CREATE TABLE verify_kit_intents (
     intent_id       TEXT PRIMARY KEY,
     user_ref        TEXT NOT NULL,
     scope           TEXT NOT NULL,
     browser_session TEXT NOT NULL,
     resource_key    TEXT NOT NULL,
     method          TEXT NOT NULL,
     path            TEXT NOT NULL,
     fields          TEXT NOT NULL,
     created_at      INTEGER NOT NULL,
     expires_at      INTEGER NOT NULL,
     consumed_at     INTEGER
   ) STRICT;
   CREATE INDEX verify_kit_intents_user ON verify_kit_intents (user_ref, expires_at);`),

  // 9: the reads every sweep process together was granted lately: a 429 records the limit as at
  // most what was read, never a rate nobody read at.
  additive(`ALTER TABLE verify_kit_sweep_pace ADD COLUMN reads_granted REAL NOT NULL DEFAULT 0;`),

  // 10: the client id each session was created with: the service answers `pending` for another
  // client's sessions, so a kit reads only its own client's attempts (and those stored before,
  // NULL here, which any client may read as before).
  additive(`ALTER TABLE verify_kit_attempts ADD COLUMN client_id TEXT;`),

  // 11: when a user's step-up grants were last revoked, per scope ('' for every scope): a grant
  // started at or before it is never read, so a verification in flight at the revocation grants
  // nothing when it completes afterwards.
  additive(`CREATE TABLE verify_kit_grant_revocations (
     user_ref   TEXT NOT NULL,
     scope      TEXT NOT NULL,
     revoked_at INTEGER NOT NULL,
     PRIMARY KEY (user_ref, scope)
   ) STRICT, WITHOUT ROWID;`),

  // 12: the SMS pumping counters (sqlite-pumping-migrations.ts).
  PUMPING_COUNTERS,

  // 13: starts refused because a key's rules tripped (sqlite-pumping-migrations.ts).
  PUMPING_REFUSED,

  // 14: grants by start time, for the sweep's deletion of those past any maxAge.
  additive(`CREATE INDEX verify_kit_grants_started ON verify_kit_grants (started_at);`),

  // 15: a browser session's grants of one scope and resource, newest first: the guard finds the
  // one it needs however many grants the user holds in other sessions or for other resources
  // (and a new grant finds the older ones it replaces). The guard's statements name it (INDEXED
  // BY): a later migration that drops or renames it is breaking.
  additive(`CREATE INDEX verify_kit_grants_session
     ON verify_kit_grants (user_ref, scope, browser_session, resource_key, started_at);`),
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Brings the kit's tables to SCHEMA_VERSION (or `target`, for upgrade tests); safe to run from
 * several processes at once. On a file a newer kit migrated it changes nothing, and refuses only
 * when a breaking migration came after `kitVersion`. `kitVersion` stands for an older kit in tests
 * (its migrations being the first ones).
 */
export function migrate(db: Database, target: number = SCHEMA_VERSION, kitVersion: number = SCHEMA_VERSION): void {
  db.exec(
    'CREATE TABLE IF NOT EXISTS verify_kit_schema (version INTEGER NOT NULL, oldest_usable_version INTEGER) STRICT',
  );
  const run = db.transaction(() => {
    // Every column: a table an older kit created has no oldest_usable_version.
    const row = db.prepare('SELECT * FROM verify_kit_schema').get() as SchemaRow | undefined;
    const current = row?.version ?? 0;
    refuseUnlessUsable('SQLite', current, row?.oldest_usable_version ?? undefined, kitVersion);
    const to = Math.max(current, Math.min(target, kitVersion));
    for (const migration of MIGRATIONS.slice(current, to)) db.exec(migration.sql);
    // Written only when it changed: a start on an up-to-date file writes nothing.
    if (row !== undefined && to === current) return;
    const oldest = oldestUsableVersion(MIGRATIONS, to);
    const columns = db.prepare(
      "SELECT 1 FROM pragma_table_info('verify_kit_schema') WHERE name = 'oldest_usable_version'",
    );
    if (columns.get() === undefined) db.exec('ALTER TABLE verify_kit_schema ADD COLUMN oldest_usable_version INTEGER');
    if (row === undefined) {
      db.prepare('INSERT INTO verify_kit_schema (version, oldest_usable_version) VALUES (?, ?)').run(to, oldest);
    } else db.prepare('UPDATE verify_kit_schema SET version = ?, oldest_usable_version = ?').run(to, oldest);
  });
  run.immediate();
}

/** The schema table's row; oldest_usable_version is absent from a table an older kit created. */
interface SchemaRow {
  version: number;
  oldest_usable_version?: number | null;
}
