/**
 * Where the demo keeps everything: one SQLite file by default (no setup), or PostgreSQL when
 * DATABASE_URL is set (several instances). Either way the demo's tables, its sessions and the kit's
 * attempts share one database, so an action's effect commits with the kit's fulfilment mark.
 *
 * Reads may answer at once (SQLite) or later (PostgreSQL): callers await them. Writes happen only
 * inside an action's fulfil, with the kit's transaction handle, and stay synchronous on SQLite,
 * whose transaction is.
 */
import type { Database } from 'better-sqlite3';
import type session from 'express-session';
import pg from 'pg';
import type { OutcomeHook, VerifyStore } from 'hosted-sms-verify-kit';
import { createPostgresStore } from 'hosted-sms-verify-kit/postgres';
import { createSqliteStore } from 'hosted-sms-verify-kit/sqlite';
import {
  createQueries,
  openDemoDatabase,
  type ActivityEntry,
  type DemoUser,
  type OutboxEntry,
  type PayoutAccount,
  type PhoneConfirmation,
} from './db.ts';
import { openDemoPostgres } from './db-postgres.ts';
import { createOutboxHook } from './outbox.ts';
import { SqliteSessionStore } from './session-store.ts';
import { createPostgresSessionStore } from './session-store-postgres.ts';

type MaybePromise<T> = T | Promise<T>;

export interface DemoReads {
  user(id: string): MaybePromise<DemoUser | undefined>;
  users(): MaybePromise<DemoUser[]>;
  payoutAccount(userId: string): MaybePromise<PayoutAccount | undefined>;
  activity(userId: string, limit?: number): MaybePromise<ActivityEntry[]>;
  /** How many of the user's activity entries are of `action`: all of them, not a page of the newest. */
  activityCount(userId: string, action: string): MaybePromise<number>;
  /** The "emails" the onOutcome hook wrote for this user, newest first. */
  outbox(userId: string, limit?: number): MaybePromise<OutboxEntry[]>;
}

/** The actions' writes, given the kit's transaction handle. */
export interface DemoWrites {
  /**
   * `phone` becomes the user's verified number only while it is still their number: a confirmation
   * started before a change of number must not verify the old one (nor unverify the new one).
   */
  confirmPhone(tx: unknown, userId: string, phone: string, at: number): MaybePromise<PhoneConfirmation>;
  /** The user's number becomes `phone`, verified at `at`; returns how many users were changed. */
  changePhone(tx: unknown, userId: string, phone: string, at: number): MaybePromise<number>;
  setPayout(tx: unknown, userId: string, accountNumber: string, at: number, sessionId: string): MaybePromise<void>;
  recordActivity(tx: unknown, entry: ActivityEntry & { userId: string }): MaybePromise<void>;
}

export interface DemoData {
  kind: 'sqlite' | 'postgres';
  /** The kit's store on the same database. */
  store: VerifyStore<unknown>;
  reads: DemoReads;
  writes: DemoWrites;
  /** An activity entry written by the demo's own routes, outside any kit transaction. */
  recordOwnActivity(entry: ActivityEntry & { userId: string }): Promise<void>;
  /** The after-commit hook writing the demo's outbox, in the same database. */
  onOutcome: OutcomeHook;
  sessionStore: session.Store & { close?(): void };
  /** The SQLite handle (SQLite only). */
  db: Database | undefined;
  /** Where the data lives, for logs: the file, or the database URL without its password. */
  location: string;
  close(): Promise<void>;
}

export interface DemoDataOptions {
  /** SQLite file, used when `databaseUrl` is not set. */
  databasePath: string;
  /** PostgreSQL connection string (DATABASE_URL). */
  databaseUrl?: string | undefined;
  sessionTtlMs?: number;
  now?: () => number;
}

/** `then` that stays synchronous for a value that is not a promise (SQLite's transaction must). */
export function after<T, R>(value: MaybePromise<T>, next: (resolved: T) => MaybePromise<R>): MaybePromise<R> {
  return value instanceof Promise ? value.then(next) : next(value);
}

export function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    // PostgreSQL also takes the password, and a client key's passphrase, as query parameters.
    for (const name of new Set(parsed.searchParams.keys())) {
      if (/^(ssl)?password$/i.test(name)) parsed.searchParams.set(name, '***');
    }
    return parsed.toString();
  } catch {
    return '(unparsable DATABASE_URL)';
  }
}

/** The actions' writes, on the kit's transaction handle (the shared better-sqlite3 Database). */
const sqliteWrites: DemoWrites = {
  confirmPhone: (tx, userId, phone, at) => {
    const db = tx as Database;
    const user = db.prepare('SELECT phone FROM demo_users WHERE id = ?').get(userId) as { phone: string } | undefined;
    if (user === undefined) return 'no_user';
    if (user.phone !== phone) return 'not_current';
    db.prepare('UPDATE demo_users SET verified_phone = ?, phone_verified_at = ? WHERE id = ?').run(phone, at, userId);
    return 'confirmed';
  },
  changePhone: (tx, userId, phone, at) =>
    (tx as Database)
      .prepare('UPDATE demo_users SET phone = ?, verified_phone = ?, phone_verified_at = ? WHERE id = ?')
      .run(phone, phone, at, userId).changes,
  setPayout: (tx, userId, accountNumber, at, sessionId) =>
    void (tx as Database)
      .prepare(
        `INSERT INTO demo_payout_accounts (user_id, account_number, changed_at, session_id) VALUES (?, ?, ?, ?)
         ON CONFLICT (user_id) DO UPDATE SET account_number = excluded.account_number,
           changed_at = excluded.changed_at, session_id = excluded.session_id`,
      )
      .run(userId, accountNumber, at, sessionId),
  recordActivity: (tx, entry) =>
    void (tx as Database)
      .prepare('INSERT INTO demo_activity (session_id, user_id, action, detail, at) VALUES (?, ?, ?, ?, ?)')
      .run(entry.sessionId, entry.userId, entry.action, entry.detail, entry.at),
};

export function openDemoData(options: DemoDataOptions): DemoData {
  const now = options.now ?? Date.now;
  const ttl = options.sessionTtlMs === undefined ? {} : { ttlMs: options.sessionTtlMs };
  if (options.databaseUrl !== undefined) {
    // A landing waits at most 5 s for a free connection (pg's default is for ever).
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: 10, connectionTimeoutMillis: 5_000 });
    // An idle connection the server drops is replaced on next use; without a listener it would crash the process.
    pool.on('error', () => {});
    const { ready, queries, writes, onOutcome } = openDemoPostgres(pool);
    const sessionStore = createPostgresSessionStore({ pool, ready, ...ttl });
    return {
      kind: 'postgres',
      store: createPostgresStore({ pool }),
      reads: queries,
      writes: writes as DemoWrites,
      // A pool runs one statement as a transaction of its own, like a client would.
      recordOwnActivity: async (entry) => (writes as DemoWrites).recordActivity(pool, entry),
      onOutcome,
      sessionStore,
      db: undefined,
      location: withoutPassword(options.databaseUrl),
      async close() {
        sessionStore.close(); // its prune timer; the pool is the demo's
        await pool.end();
      },
    };
  }
  const db = openDemoDatabase(options.databasePath);
  const sessionStore = new SqliteSessionStore({ db, ...ttl, now });
  return {
    kind: 'sqlite',
    store: createSqliteStore({ database: db }),
    reads: createQueries(db),
    writes: sqliteWrites,
    recordOwnActivity: async (entry) => sqliteWrites.recordActivity(db, entry),
    onOutcome: createOutboxHook(db),
    sessionStore,
    db,
    location: options.databasePath,
    async close() {
      sessionStore.close();
      if (db.open) db.close();
    },
  };
}
