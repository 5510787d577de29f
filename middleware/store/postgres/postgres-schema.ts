/**
 * The kit's PostgreSQL schema, versioned in its own table. Migrations only ever append. Several
 * app instances may start at once: each migration run holds a transaction-scoped advisory lock,
 * so exactly one of them creates the tables and the others then find them at the current version.
 * Each migration says whether the previous version's code still works after it (schema-versions.ts):
 * an instance of an older kit starts on a database a newer one migrated, unless a breaking
 * migration came in between (a rolling deploy, a rollback).
 */
import type { Pool } from 'pg';
import { transactionOn } from './postgres-query.ts';
import { additive, breaking, type Migration, oldestUsableVersion, refuseUnlessUsable } from '../schema-versions.ts';
import { START_BUDGET_MEMBERS, START_BUDGETS } from './postgres-budget-migrations.ts';
import { ROUTINES } from './postgres-sql.ts';

/** Chosen once for this kit ("vkit" in ASCII); only the kit's migrations take it. */
const MIGRATION_LOCK = 0x766b6974;

const MIGRATIONS: readonly Migration[] = [
  // 1: one attempt per state; session_id unique so fulfilment can be keyed by it (no kit before it
  // used these tables). Times are
  // milliseconds since the epoch, as the SQLite store keeps them.
  // start_seq is the start order no clock can tie (newest started = highest); destination is the
  // number the code was sent to.
  breaking(`CREATE TABLE verify_kit_attempts (
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
   );`),

  // 2: retention (when an attempt's params and destination were removed) and support-screen reads.
  additive(`ALTER TABLE verify_kit_attempts ADD COLUMN redacted_at BIGINT;
   CREATE INDEX verify_kit_attempts_settled ON verify_kit_attempts (finished_at) WHERE outcome <> 'pending';
   CREATE INDEX verify_kit_attempts_user ON verify_kit_attempts (user_ref, created_at);`),

  // 3: the start budgets' counters and their routine (postgres-budget-migrations.ts).
  START_BUDGETS,

  // 4: fewer index writes per attempt: a claim and a mark each wrote a new entry into every index.
  // The lease index goes (a run's leases are all on pending attempts: the release finds them
  // through the pending-by-due index), the per-user index goes (support lists by user use the
  // intent index, whose first column is the user, as the SQLite store's do), and so does
  // start_seq's uniqueness (its sequence numbers it; the intent index orders by it). A claim then
  // sets only columns no index reads: where its page has room (fillfactor) it is a HOT update,
  // which writes no index entry at all. The pending-by-age index stays: only a start writes it.
  // Additive: no statement of older code names these indexes or relies on start_seq's uniqueness.
  additive(`DROP INDEX IF EXISTS verify_kit_attempts_lease;
   DROP INDEX IF EXISTS verify_kit_attempts_user;
   ALTER TABLE verify_kit_attempts DROP CONSTRAINT IF EXISTS verify_kit_attempts_start_seq_key;
   ALTER TABLE verify_kit_attempts SET (fillfactor = 80);`),

  // 5: the userRef the service was sent, when it is not user_ref itself: for an action that proves
  // the destination, a keyed HMAC of the user and the number, so a passkey enrolled for another
  // number never verifies this one. user_ref stays the integrator's user for ordering and reads.
  // Breaking: code before it compares the userRef the service echoes with user_ref, so it refuses
  // every attempt started with a bound service userRef.
  breaking(`ALTER TABLE verify_kit_attempts ADD COLUMN service_user_ref TEXT;`),

  // 6: the sweep's shared pace (sweep/pacing.ts), one row: how fast every sweep process together
  // may read statuses after the service answered 429, and their shared bucket of read permits.
  additive(`CREATE TABLE verify_kit_sweep_pace (
     id               INTEGER PRIMARY KEY CHECK (id = 1),
     rate_per_second  DOUBLE PRECISION,
     limit_per_second DOUBLE PRECISION,
     paused_until     BIGINT NOT NULL,
     cut_at           BIGINT NOT NULL,
     tokens           DOUBLE PRECISION NOT NULL,
     tokens_at        BIGINT NOT NULL
   );
   INSERT INTO verify_kit_sweep_pace VALUES (1, NULL, NULL, 0, 0, 0, 0);`),

  // 7: room for every row of a page to be claimed in place. A claim updates its whole batch in one
  // statement, so no old row version can be pruned before it ends, and a claimed row is a little
  // longer (its lease): at fillfactor 80 only the first few rows of a page found room and most
  // claims wrote an entry into every index. At 45 every claimed row is a HOT update (no index
  // entry), for about twice the heap's pages. Pages already written keep their rows until a
  // rewrite (VACUUM FULL).
  additive(`ALTER TABLE verify_kit_attempts SET (fillfactor = 45);`),

  // 8: step-up (requireRecentVerification): grants, written by the fulfil path in the attempt's own
  // transaction (one per verified attempt, keyed by its session), and the guarded requests kept
  // server-side while their user verifies (consumed at most once, by one conditional UPDATE).
  additive(`CREATE TABLE verify_kit_grants (
     session_id      TEXT PRIMARY KEY,
     user_ref        TEXT NOT NULL,
     scope           TEXT NOT NULL,
     resource_key    TEXT NOT NULL,
     browser_session TEXT NOT NULL,
     started_at      BIGINT NOT NULL,
     granted_at      BIGINT NOT NULL
   );
   CREATE INDEX verify_kit_grants_user ON verify_kit_grants (user_ref, scope, started_at);
   CREATE TABLE verify_kit_intents (
     intent_id       TEXT PRIMARY KEY,
     user_ref        TEXT NOT NULL,
     scope           TEXT NOT NULL,
     browser_session TEXT NOT NULL,
     resource_key    TEXT NOT NULL,
     method          TEXT NOT NULL,
     path            TEXT NOT NULL,
     fields          JSONB NOT NULL,
     created_at      BIGINT NOT NULL,
     expires_at      BIGINT NOT NULL,
     consumed_at     BIGINT
   );
   CREATE INDEX verify_kit_intents_user ON verify_kit_intents (user_ref, expires_at);`),

  // 9: the reads every sweep process together was granted lately: a 429 records the limit as at
  // most what was read, never a rate nobody read at.
  additive(`ALTER TABLE verify_kit_sweep_pace ADD COLUMN reads_granted DOUBLE PRECISION NOT NULL DEFAULT 0;`),

  // 10: the client id each session was created with: the service answers `pending` for another
  // client's sessions, so a kit reads only its own client's attempts (and those stored before,
  // NULL here, which any client may read as before). No default: adding the column rewrites nothing.
  additive(`ALTER TABLE verify_kit_attempts ADD COLUMN client_id TEXT;`),

  // 11: when a user's step-up grants were last revoked, per scope ('' for every scope): a grant
  // started at or before it is never read, so a verification in flight at the revocation grants
  // nothing when it completes afterwards (even one whose fulfilment commits after the revocation).
  additive(`CREATE TABLE verify_kit_grant_revocations (
     user_ref   TEXT NOT NULL,
     scope      TEXT NOT NULL,
     revoked_at BIGINT NOT NULL,
     PRIMARY KEY (user_ref, scope)
   );`),

  // 12: budgets of distinct values, the numbers a user tried (postgres-budget-migrations.ts).
  START_BUDGET_MEMBERS,

  // 13: the SMS pumping counters: texts sent and verified per key and hour (a key per country,
  // number block, client address, user, and address with country), each send's keys so a
  // verification counts where its text was counted, the decisions, and the operators' rules.
  additive(`CREATE TABLE verify_kit_pumping_counts (
     dimension TEXT NOT NULL,
     key       TEXT NOT NULL,
     hour      INTEGER NOT NULL,
     sent      INTEGER NOT NULL DEFAULT 0,
     verified  INTEGER NOT NULL DEFAULT 0,
     PRIMARY KEY (dimension, key, hour)
   );
   CREATE INDEX verify_kit_pumping_counts_hour ON verify_kit_pumping_counts (hour);
   CREATE TABLE verify_kit_pumping_sends (
     session_id TEXT PRIMARY KEY,
     hour       INTEGER NOT NULL,
     dimensions TEXT[] NOT NULL,
     keys       TEXT[] NOT NULL,
     verified   BOOLEAN NOT NULL DEFAULT FALSE
   );
   CREATE INDEX verify_kit_pumping_sends_hour ON verify_kit_pumping_sends (hour);
   CREATE TABLE verify_kit_pumping_decisions (
     id         BIGSERIAL PRIMARY KEY,
     decided_at BIGINT NOT NULL,
     decision   TEXT NOT NULL,
     reasons    TEXT[] NOT NULL,
     country    TEXT NOT NULL,
     block      TEXT NOT NULL,
     address    TEXT NOT NULL,
     user_ref   TEXT NOT NULL
   );
   CREATE INDEX verify_kit_pumping_decisions_at ON verify_kit_pumping_decisions (decided_at);
   CREATE TABLE verify_kit_pumping_rules (
     dimension TEXT NOT NULL,
     key       TEXT NOT NULL,
     rule      TEXT NOT NULL CHECK (rule IN ('allow', 'block')),
     until     BIGINT NOT NULL,
     set_at    BIGINT NOT NULL,
     PRIMARY KEY (dimension, key)
   );`),

  // 14: starts refused because a key's rules tripped, per key and hour: a key stays refused while
  // an attack keeps pressing on it.
  additive(`ALTER TABLE verify_kit_pumping_counts ADD COLUMN refused INTEGER NOT NULL DEFAULT 0;`),

  // 15: grants by start time, for the sweep's deletion of those past any maxAge.
  additive(`CREATE INDEX verify_kit_grants_started ON verify_kit_grants (started_at);`),

  // 16: a browser session's grants of one scope and resource, newest first: the guard finds the
  // one it needs however many grants the user holds in other sessions or for other resources
  // (and a new grant finds the older ones it replaces).
  additive(`CREATE INDEX verify_kit_grants_session
     ON verify_kit_grants (user_ref, scope, browser_session, resource_key, started_at);`),

  // 17: counter keys compare by their bytes, whatever the database sorts text by: on a server set
  // up with en_US.UTF-8, which skips spaces and punctuation, the range that finds an address's
  // "<address> <country>" keys found none of them.
  additive(`ALTER TABLE verify_kit_pumping_counts ALTER COLUMN key TYPE TEXT COLLATE "C";`),

  // 18: where each revocation falls in the attempts' start order (start_seq's sequence, read when
  // it is recorded): a verification started before it grants nothing, whatever the clocks of the
  // instances that started it and revoked say. No default: adding the column rewrites nothing.
  additive(`ALTER TABLE verify_kit_grant_revocations ADD COLUMN revoked_seq BIGINT;`),
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Brings the kit's tables to SCHEMA_VERSION (or to `target`, for upgrade tests) and creates the
 * routines this code calls; safe to run from several processes at once. On a database a newer kit
 * migrated it changes no table, creates the routines this code calls beside the newer kit's (each
 * is named by its whole definition) and refuses only when a breaking migration came after
 * `kitVersion`. `kitVersion` stands for an older kit in tests (its migrations being the first ones).
 */
export function migrate(
  pool: Pool,
  target: number = SCHEMA_VERSION,
  kitVersion: number = SCHEMA_VERSION,
): Promise<void> {
  return transactionOn(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query(
      'CREATE TABLE IF NOT EXISTS verify_kit_schema (version INTEGER NOT NULL, oldest_usable_version INTEGER)',
    );
    // Every column: a table an older kit created has no oldest_usable_version.
    const { rows } = await client.query<SchemaRow>('SELECT * FROM verify_kit_schema');
    const current = rows[0]?.version ?? 0;
    refuseUnlessUsable('PostgreSQL', current, rows[0]?.oldest_usable_version ?? undefined, kitVersion);
    const to = Math.max(current, Math.min(target, kitVersion));
    for (const migration of MIGRATIONS.slice(current, to)) await client.query(migration.sql);
    // Written only when it changed: a start on an up-to-date database (every `--once` sweep run's)
    // writes nothing, so its transaction commits without waiting for a WAL flush.
    if (to !== current || rows.length === 0) {
      const oldest = oldestUsableVersion(MIGRATIONS, to);
      await client.query('ALTER TABLE verify_kit_schema ADD COLUMN IF NOT EXISTS oldest_usable_version INTEGER');
      if (rows.length === 0) {
        await client.query('INSERT INTO verify_kit_schema (version, oldest_usable_version) VALUES ($1, $2)', [
          to,
          oldest,
        ]);
      } else await client.query('UPDATE verify_kit_schema SET version = $1, oldest_usable_version = $2', [to, oldest]);
    }
    if (to < kitVersion) return;
    // The routines this code calls, each under a name carrying a hash of its definition (postgres-routine.ts).
    for (const routine of ROUTINES) {
      const found = await client.query('SELECT to_regprocedure($1) IS NOT NULL AS present', [routine.signature]);
      if (found.rows[0]?.present !== true) await client.query(routine.create);
    }
  });
}

/** The schema table's row; oldest_usable_version is absent from a table an older kit created. */
interface SchemaRow {
  version: number;
  oldest_usable_version?: number | null;
}
