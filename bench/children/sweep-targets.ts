/**
 * The store a sweep measurement runs on, the kit's PostgreSQL or SQLite store, with the bench's
 * action (one grant per attempt) and how to count the grants it wrote.
 */
import type { Database } from 'better-sqlite3';
import pg from 'pg';
import type { ActionDefinition, VerifyStore } from '../../middleware/index.ts';
import { createPostgresStore } from '../../middleware/store/postgres/postgres.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import { ACTION, PG_INSERT_GRANT, SUCCESS_PATH } from '../common.ts';
import type { SweepArgs } from './sweep-child-types.ts';

/** The store the sweep runs on, its action (one grant per attempt) and how to count the grants afterwards. */
export interface SweepTarget {
  store: VerifyStore<unknown>;
  action: ActionDefinition<unknown>;
  countGrants: () => Promise<number>;
  pool: pg.Pool | undefined;
}

/** The kit's PostgreSQL store on its own pool (the sweep's concurrency plus 2). */
export function postgresTarget(args: SweepArgs & { databaseUrl: string }): SweepTarget {
  const p = new pg.Pool({ connectionString: args.databaseUrl, max: (args.concurrency ?? 4) + 2 });
  const store = createPostgresStore({ pool: p }) as VerifyStore<unknown>;
  const action: ActionDefinition<unknown> = {
    name: ACTION,
    operationSensitivity: 'normal',
    successPath: SUCCESS_PATH,
    async fulfil(tx, attempt) {
      const text = PG_INSERT_GRANT;
      const values = [attempt.sessionId, attempt.userRef];
      await (tx as pg.PoolClient).query({ name: 'bench_grant', text, values });
    },
  };
  const countGrants = async () => (await p.query('SELECT count(*)::int AS n FROM bench_grants')).rows[0].n as number;
  return { store, action, countGrants, pool: p };
}

/** The kit's SQLite store on the seeded file; the action runs synchronously inside its transaction. */
export function sqliteTarget(args: SweepArgs): SweepTarget {
  const sqlite = createSqliteStore({ database: args.dbPath });
  const db = sqlite.db;
  const insertGrant = db.prepare('INSERT INTO bench_grants (session_id, user_ref) VALUES (?, ?)');
  const sync: ActionDefinition<Database> = {
    name: ACTION,
    operationSensitivity: 'normal',
    successPath: SUCCESS_PATH,
    fulfil(_tx, attempt) {
      insertGrant.run(attempt.sessionId, attempt.userRef);
    },
  };
  const countGrants = async () => (db.prepare('SELECT COUNT(*) AS n FROM bench_grants').get() as { n: number }).n;
  return {
    store: sqlite as VerifyStore<unknown>,
    action: sync as ActionDefinition<unknown>,
    countGrants,
    pool: undefined,
  };
}
