/**
 * The demo's own tables, in the same SQLite file as its sessions and the kit's attempts, so an
 * action's effect and the kit's fulfilment mark commit in one transaction.
 *
 * The demo versions its schema with PRAGMA user_version (the kit keeps its own version table).
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3, { type Database } from 'better-sqlite3';

export type { Database };

export interface DemoUser {
  id: string;
  name: string;
  email: string;
  phone: string;
  /** The number last confirmed through verification, and when. */
  verifiedPhone: string | null;
  phoneVerifiedAt: number | null;
}

/** What confirming a number did: confirmed it, or nothing (it is no longer the user's; the user is gone). */
export type PhoneConfirmation = 'confirmed' | 'not_current' | 'no_user';

export interface PayoutAccount {
  accountNumber: string;
  changedAt: number;
  sessionId: string;
}

export interface OutboxEntry {
  sessionId: string;
  outcome: string;
  subject: string;
  body: string;
  at: number;
}

export interface ActivityEntry {
  sessionId: string;
  action: string;
  detail: string;
  at: number;
}

/** The seeded demo users (E.164 numbers in the 555-01xx range reserved for fiction). */
export const SEEDED_USERS: readonly Omit<DemoUser, 'verifiedPhone' | 'phoneVerifiedAt'>[] = [
  { id: 'usr_alice', name: 'Alice Moreau', email: 'alice@example.com', phone: '+15550100001' },
  { id: 'usr_bob', name: 'Bob Okafor', email: 'bob@example.com', phone: '+15550100002' },
  { id: 'usr_chen', name: 'Chen Wei', email: 'chen@example.com', phone: '+15550100003' },
];

const MIGRATIONS: readonly string[] = [
  `CREATE TABLE demo_users (
     id                 TEXT PRIMARY KEY,
     name               TEXT NOT NULL,
     email              TEXT NOT NULL,
     phone              TEXT NOT NULL,
     verified_phone     TEXT,
     phone_verified_at  INTEGER
   ) STRICT;
   CREATE TABLE demo_payout_accounts (
     user_id        TEXT PRIMARY KEY REFERENCES demo_users (id),
     account_number TEXT NOT NULL,
     changed_at     INTEGER NOT NULL,
     session_id     TEXT NOT NULL
   ) STRICT;
   CREATE TABLE demo_activity (
     session_id TEXT PRIMARY KEY,
     user_id    TEXT NOT NULL REFERENCES demo_users (id),
     action     TEXT NOT NULL,
     detail     TEXT NOT NULL,
     at         INTEGER NOT NULL
   ) STRICT;
   CREATE INDEX demo_activity_user ON demo_activity (user_id, at);
   CREATE TABLE demo_sessions (
     sid     TEXT PRIMARY KEY,
     sess    TEXT NOT NULL,
     expires INTEGER NOT NULL
   ) STRICT;
   CREATE INDEX demo_sessions_expires ON demo_sessions (expires);`,
  // 2: the outbox of "emails" the kit's onOutcome hook writes (one per outcome event).
  `CREATE TABLE demo_outbox (
     event_id   TEXT PRIMARY KEY,
     user_id    TEXT NOT NULL,
     session_id TEXT NOT NULL,
     outcome    TEXT NOT NULL,
     subject    TEXT NOT NULL,
     body       TEXT NOT NULL,
     at         INTEGER NOT NULL
   ) STRICT;
   CREATE INDEX demo_outbox_user ON demo_outbox (user_id, at);`,
];

/** Opens (creating if needed) the demo database, applies migrations and seeds the users. */
export function openDemoDatabase(path: string): Database {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new BetterSqlite3(path);
  db.pragma('busy_timeout = 5000');
  if (!db.memory) db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  const migrate = db.transaction(() => {
    const current = db.pragma('user_version', { simple: true }) as number;
    if (current > MIGRATIONS.length) {
      throw new Error(`${path} has demo schema version ${current}, newer than this demo's ${MIGRATIONS.length}.`);
    }
    for (const migration of MIGRATIONS.slice(current)) db.exec(migration);
    db.pragma(`user_version = ${MIGRATIONS.length}`);
    const seed = db.prepare(
      'INSERT OR IGNORE INTO demo_users (id, name, email, phone) VALUES (@id, @name, @email, @phone)',
    );
    for (const user of SEEDED_USERS) seed.run(user);
  });
  migrate.immediate();
  return db;
}

interface UserRow {
  id: string;
  name: string;
  email: string;
  phone: string;
  verified_phone: string | null;
  phone_verified_at: number | null;
}

function toUser(row: UserRow): DemoUser {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    phone: row.phone,
    verifiedPhone: row.verified_phone,
    phoneVerifiedAt: row.phone_verified_at,
  };
}

/** Read helpers for pages (writes happen only in the actions' fulfil, inside the kit's transaction). */
export function createQueries(db: Database) {
  const userById = db.prepare('SELECT * FROM demo_users WHERE id = ?');
  const allUsers = db.prepare('SELECT * FROM demo_users ORDER BY name');
  const payoutByUser = db.prepare(
    'SELECT account_number AS accountNumber, changed_at AS changedAt, session_id AS sessionId FROM demo_payout_accounts WHERE user_id = ?',
  );
  const activityByUser = db.prepare(
    'SELECT session_id AS sessionId, action, detail, at FROM demo_activity WHERE user_id = ? ORDER BY at DESC, rowid DESC LIMIT ?',
  );
  const activityCount = db.prepare('SELECT COUNT(*) AS n FROM demo_activity WHERE user_id = ? AND action = ?');
  const outboxByUser = db.prepare(
    `SELECT session_id AS sessionId, outcome, subject, body, at FROM demo_outbox WHERE user_id = ?
     ORDER BY at DESC, rowid DESC LIMIT ?`,
  );
  return {
    user(id: string): DemoUser | undefined {
      const row = userById.get(id) as UserRow | undefined;
      return row === undefined ? undefined : toUser(row);
    },
    users(): DemoUser[] {
      return (allUsers.all() as UserRow[]).map(toUser);
    },
    payoutAccount(userId: string): PayoutAccount | undefined {
      return payoutByUser.get(userId) as PayoutAccount | undefined;
    },
    activity(userId: string, limit = 100): ActivityEntry[] {
      return activityByUser.all(userId, limit) as ActivityEntry[];
    },
    activityCount(userId: string, action: string): number {
      return (activityCount.get(userId, action) as { n: number }).n;
    },
    /** The "emails" the onOutcome hook wrote for this user, newest first. */
    outbox(userId: string, limit = 50): OutboxEntry[] {
      return outboxByUser.all(userId, limit) as OutboxEntry[];
    },
  };
}

export type DemoQueries = ReturnType<typeof createQueries>;
