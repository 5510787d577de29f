/**
 * The demo's sessions on PostgreSQL: connect-pg-simple's store, shared by every instance, in the
 * `demo_sessions` table that the demo's migration creates (db-postgres.ts). Rows expire with their
 * cookie; connect-pg-simple prunes expired ones every 15 minutes or so.
 */
import connectPgSimple from 'connect-pg-simple';
import session from 'express-session';
import type pg from 'pg';

const PgSessionStore = connectPgSimple(session);

export interface PostgresSessionStoreOptions {
  pool: pg.Pool;
  /** The demo's migration: the table exists once it resolves. */
  ready: Promise<void>;
  /** Lifetime of a session whose cookie has no expiry. */
  ttlMs?: number;
}

export function createPostgresSessionStore(options: PostgresSessionStoreOptions): connectPgSimple.PGStore {
  // Every query waits for the demo's migration, which creates the table under the lock that makes
  // instances starting at once safe (createTableIfMissing checks, then creates, without one).
  const migrated = {
    async query(text: string, values: unknown[]) {
      await options.ready;
      return options.pool.query(text, values);
    },
  };
  return new PgSessionStore({
    pool: migrated as unknown as pg.Pool,
    tableName: 'demo_sessions',
    ...(options.ttlMs === undefined ? {} : { ttl: options.ttlMs / 1000 }),
  });
}
