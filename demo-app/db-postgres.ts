/**
 * The demo on PostgreSQL (DATABASE_URL): its tables, its sessions and the kit's attempts in one
 * database, so an action's effect and the kit's fulfilment mark commit in one transaction (the
 * `tx` each fulfil receives is the pg client inside the kit's BEGIN ... COMMIT), and several
 * instances of the demo share users, sessions (connect-pg-simple's store, on the table the
 * migration below creates), attempts and start limits.
 */
import type { OutcomeEvent } from 'hosted-sms-verify-kit';
import type pg from 'pg';
import type { ActivityEntry, DemoUser, OutboxEntry, PayoutAccount, PhoneConfirmation } from './db.ts';
import { SEEDED_USERS } from './db.ts';
import { emailFor } from './outbox.ts';

/** Taken only by the demo's own migrations (the kit's take their own). */
const DEMO_MIGRATION_LOCK = 0x64656d6f;

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS demo_users (
    id                TEXT PRIMARY KEY,
    name              TEXT NOT NULL,
    email             TEXT NOT NULL,
    phone             TEXT NOT NULL,
    verified_phone    TEXT,
    phone_verified_at BIGINT
  );
  CREATE TABLE IF NOT EXISTS demo_payout_accounts (
    user_id        TEXT PRIMARY KEY REFERENCES demo_users (id),
    account_number TEXT NOT NULL,
    changed_at     BIGINT NOT NULL,
    session_id     TEXT NOT NULL
  );
  CREATE TABLE IF NOT EXISTS demo_activity (
    seq        BIGSERIAL,
    session_id TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES demo_users (id),
    action     TEXT NOT NULL,
    detail     TEXT NOT NULL,
    at         BIGINT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS demo_activity_user ON demo_activity (user_id, at);
  -- express-session's sessions, read and written by connect-pg-simple: its table.sql's columns.
  CREATE TABLE IF NOT EXISTS demo_sessions (
    sid    VARCHAR PRIMARY KEY,
    sess   JSON NOT NULL,
    expire TIMESTAMP(6) NOT NULL
  );
  CREATE INDEX IF NOT EXISTS demo_sessions_expire ON demo_sessions (expire);
  -- The "emails" the kit's onOutcome hook writes (one per outcome event: the event id is the key).
  CREATE TABLE IF NOT EXISTS demo_outbox (
    seq        BIGSERIAL,
    event_id   TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL,
    session_id TEXT NOT NULL,
    outcome    TEXT NOT NULL,
    subject    TEXT NOT NULL,
    body       TEXT NOT NULL,
    at         BIGINT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS demo_outbox_user ON demo_outbox (user_id, at);`;

/**
 * Sessions stored before the demo used connect-pg-simple (`sess` as text, `expires` in ms) stay:
 * the same rows take its columns, so nobody signed in is signed out by the upgrade.
 */
const SESSIONS_IN_CONNECT_PG_SIMPLE_COLUMNS = `
  DO $$ BEGIN
    IF EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema()
               AND table_name = 'demo_sessions' AND column_name = 'expires') THEN
      ALTER TABLE demo_sessions ADD COLUMN expire TIMESTAMP(6);
      UPDATE demo_sessions SET expire = to_timestamp(expires / 1000.0);
      ALTER TABLE demo_sessions
        ALTER COLUMN expire SET NOT NULL,
        ALTER COLUMN sess TYPE JSON USING sess::json,
        DROP COLUMN expires;
    END IF;
  END $$;`;

interface UserRow {
  id: string;
  name: string;
  email: string;
  phone: string;
  verified_phone: string | null;
  phone_verified_at: string | null;
}

const toUser = (row: UserRow): DemoUser => ({
  id: row.id,
  name: row.name,
  email: row.email,
  phone: row.phone,
  verifiedPhone: row.verified_phone,
  phoneVerifiedAt: row.phone_verified_at === null ? null : Number(row.phone_verified_at),
});

/** Creates the demo's tables and seeds the users; several instances may run it at once. */
async function migrate(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [DEMO_MIGRATION_LOCK]);
    await client.query(SESSIONS_IN_CONNECT_PG_SIMPLE_COLUMNS);
    await client.query(SCHEMA);
    for (const user of SEEDED_USERS) {
      await client.query(
        'INSERT INTO demo_users (id, name, email, phone) VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING',
        [user.id, user.name, user.email, user.phone],
      );
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

export function openDemoPostgres(pool: pg.Pool) {
  const ready = migrate(pool);
  ready.catch(() => {}); // reported by every query below
  const rows = async <T>(sql: string, values: unknown[]) => {
    await ready;
    return (await pool.query(sql, values)).rows as T[];
  };
  return { ready, queries: postgresQueries(rows), writes: postgresWrites, onOutcome: postgresOutbox(pool, ready) };
}

type Rows = <T>(sql: string, values: unknown[]) => Promise<T[]>;

function postgresQueries(rows: Rows) {
  return {
    async user(id: string): Promise<DemoUser | undefined> {
      const [row] = await rows<UserRow>('SELECT * FROM demo_users WHERE id = $1', [id]);
      return row === undefined ? undefined : toUser(row);
    },
    async users(): Promise<DemoUser[]> {
      return (await rows<UserRow>('SELECT * FROM demo_users ORDER BY name', [])).map(toUser);
    },
    async payoutAccount(userId: string): Promise<PayoutAccount | undefined> {
      const [row] = await rows<{ accountNumber: string; changedAt: string; sessionId: string }>(
        `SELECT account_number AS "accountNumber", changed_at AS "changedAt", session_id AS "sessionId"
         FROM demo_payout_accounts WHERE user_id = $1`,
        [userId],
      );
      return row === undefined ? undefined : { ...row, changedAt: Number(row.changedAt) };
    },
    async activity(userId: string, limit = 100): Promise<ActivityEntry[]> {
      const found = await rows<{ sessionId: string; action: string; detail: string; at: string }>(
        `SELECT session_id AS "sessionId", action, detail, at FROM demo_activity
         WHERE user_id = $1 ORDER BY at DESC, seq DESC LIMIT $2`,
        [userId, limit],
      );
      return found.map((entry) => ({ ...entry, at: Number(entry.at) }));
    },
    async activityCount(userId: string, action: string): Promise<number> {
      const [row] = await rows<{ n: string }>(
        'SELECT COUNT(*) AS n FROM demo_activity WHERE user_id = $1 AND action = $2',
        [userId, action],
      );
      return Number(row?.n ?? 0);
    },
    async outbox(userId: string, limit = 50): Promise<OutboxEntry[]> {
      const found = await rows<OutboxEntry & { at: string }>(
        `SELECT session_id AS "sessionId", outcome, subject, body, at FROM demo_outbox
         WHERE user_id = $1 ORDER BY at DESC, seq DESC LIMIT $2`,
        [userId, limit],
      );
      return found.map((entry) => ({ ...entry, at: Number(entry.at) }));
    },
  };
}

/** The onOutcome hook: one outbox row per event, however often it is delivered. */
function postgresOutbox(pool: pg.Pool, ready: Promise<void>) {
  return async (event: OutcomeEvent): Promise<void> => {
    await ready;
    // Read after the commit: what the fulfil recorded decides what the email may say.
    const { rows } = await pool.query<{ detail: string }>('SELECT detail FROM demo_activity WHERE session_id = $1', [
      event.sessionId,
    ]);
    const email = emailFor(event, rows[0]?.detail);
    await pool.query(
      `INSERT INTO demo_outbox (event_id, user_id, session_id, outcome, subject, body, at)
       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (event_id) DO NOTHING`,
      [event.eventId, event.userRef, event.sessionId, event.outcome, email.subject, email.body, event.occurredAt],
    );
  };
}

/** The actions' writes, on the kit's transaction client. */
const postgresWrites = {
  async confirmPhone(tx: pg.PoolClient, userId: string, phone: string, at: number): Promise<PhoneConfirmation> {
    // Locked until the commit: a change of number on another instance waits, then finds this one done.
    const found = await tx.query<{ phone: string }>('SELECT phone FROM demo_users WHERE id = $1 FOR UPDATE', [userId]);
    const user = found.rows[0];
    if (user === undefined) return 'no_user';
    if (user.phone !== phone) return 'not_current';
    await tx.query('UPDATE demo_users SET verified_phone = $1, phone_verified_at = $2 WHERE id = $3', [
      phone,
      at,
      userId,
    ]);
    return 'confirmed';
  },
  async changePhone(tx: pg.PoolClient, userId: string, phone: string, at: number): Promise<number> {
    const sql = 'UPDATE demo_users SET phone = $1, verified_phone = $1, phone_verified_at = $2 WHERE id = $3';
    const result = await tx.query(sql, [phone, at, userId]);
    return result.rowCount ?? 0;
  },
  async setPayout(tx: pg.PoolClient, userId: string, accountNumber: string, at: number, sessionId: string) {
    await tx.query(
      `INSERT INTO demo_payout_accounts (user_id, account_number, changed_at, session_id) VALUES ($1, $2, $3, $4)
       ON CONFLICT (user_id) DO UPDATE SET account_number = excluded.account_number, changed_at = excluded.changed_at,
         session_id = excluded.session_id`,
      [userId, accountNumber, at, sessionId],
    );
  },
  async recordActivity(tx: pg.PoolClient, entry: ActivityEntry & { userId: string }): Promise<void> {
    await tx.query('INSERT INTO demo_activity (session_id, user_id, action, detail, at) VALUES ($1, $2, $3, $4, $5)', [
      entry.sessionId,
      entry.userId,
      entry.action,
      entry.detail,
      entry.at,
    ]);
  },
};
