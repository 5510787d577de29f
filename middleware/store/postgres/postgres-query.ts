/**
 * How the PostgreSQL store talks to the app's Pool: every statement by name (postgres-sql.ts),
 * each call after the migrations are done, and BEGIN ... COMMIT on one pooled client.
 */
import type { Pool, PoolClient, QueryResultRow } from 'pg';
import { isMissedDeadline } from '../../errors.ts';
import { SQL, type StatementName } from './postgres-sql.ts';

/** The app's Pool, and the store's migrations (every call waits for them). */
export interface PostgresDb {
  readonly pool: Pool;
  readonly ready: Promise<void>;
}

/** SQLSTATE 25P02: a statement was sent after an error had already aborted the transaction. */
export const IN_FAILED_TRANSACTION = '25P02';
export const ABORTED = 'The transaction was aborted by an error inside the action, so nothing was committed.';

const statement = (name: StatementName) => ({ name: `verify_kit_${name}`, text: SQL[name] });

/**
 * The SQLSTATE an error carries, or ''. Never throws: the action's code may throw anything, and a
 * check that threw here would skip the ROLLBACK and pool a connection with its transaction open.
 */
function sqlStateOf(error: unknown): string {
  try {
    const code = (error as { code?: unknown } | null)?.code;
    return typeof code === 'string' ? code : '';
  } catch {
    return '';
  }
}

/** SQLSTATEs PostgreSQL ends a transaction with when it can only let the other one go on: retried. */
const RETRIED = new Set(['40P01', '40001']);
/** Tries of a transaction (or statement) ended by a deadlock or a serialisation failure. */
const TRIES = 4;

/**
 * Runs `work` again when PostgreSQL ended it as a deadlock victim (40P01) or as not serialisable
 * (40001): everything it wrote was rolled back, so running it again is safe, after a short random
 * pause so the two do not meet again.
 */
async function retried<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= TRIES || !RETRIED.has(sqlStateOf(error))) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));
    }
  }
}

/** Runs one statement on the pool, once the migrations are done. */
export async function query<Row extends QueryResultRow>(db: PostgresDb, name: StatementName, values: unknown[]) {
  await db.ready;
  return retried(() => db.pool.query<Row>({ ...statement(name), values }));
}

/** Runs one statement on a transaction's client. */
export function queryOn<Row extends QueryResultRow>(client: PoolClient, name: StatementName, values: unknown[]) {
  return client.query<Row>({ ...statement(name), values });
}

/**
 * How a transaction's COMMIT waits. `flushed`, the default (every fulfilment and mark): COMMIT
 * returns once the write is on disk, as every statement sent alone does. `unflushed`: only for
 * state that a crash may set back by a fraction of a second at no cost: COMMIT returns at once and
 * the WAL writer flushes it shortly after (synchronous_commit off for that transaction alone;
 * others see it as soon as it commits).
 */
export type Commit = 'flushed' | 'unflushed';

const BEGIN: Record<Commit, string> = {
  flushed: 'BEGIN',
  unflushed: 'BEGIN; SET LOCAL synchronous_commit TO OFF',
};

/** Runs `work` inside BEGIN ... COMMIT on one pooled client, once the migrations are done. */
export async function inTransaction<T>(
  db: PostgresDb,
  work: (client: PoolClient) => Promise<T>,
  commit: Commit = 'flushed',
): Promise<T> {
  await db.ready;
  return transactionOn(db.pool, work, commit);
}

/**
 * BEGIN ... COMMIT on one client of `pool`; rolls back on any throw, and runs again a transaction
 * ended by a deadlock or a serialisation failure (the migrations use it directly).
 */
export function transactionOn<T>(
  pool: Pool,
  work: (client: PoolClient) => Promise<T>,
  commit: Commit = 'flushed',
): Promise<T> {
  return retried(() => transactionOnce(pool, work, commit));
}

async function transactionOnce<T>(pool: Pool, work: (client: PoolClient) => Promise<T>, commit: Commit): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  // A connection the database ends while no statement is in flight (the action awaiting something
  // else) is reported as an 'error' event, which would end the process unheard: it fails this
  // transaction instead, and the connection is destroyed rather than pooled.
  let lost: Error | undefined;
  const onLost = (error: Error) => {
    lost ??= error;
  };
  client.on('error', onLost);
  try {
    await client.query(BEGIN[commit]);
    const result = await work(client);
    const committed = await client.query('COMMIT');
    // An action that swallowed an SQL error leaves the transaction aborted: COMMIT then rolls back.
    if (committed.command === 'ROLLBACK') throw new Error(ABORTED);
    return result;
  } catch (error) {
    // By the deadline's mark, not by code: the action may throw a KitError `hook_failed` of its own.
    if (isMissedDeadline(error)) {
      // The action missed its deadline and may still be using this client: ending the connection
      // rolls the transaction back on the server, and nothing late can write through it.
      broken = error;
      throw error;
    }
    await client.query('ROLLBACK').catch((rollbackError: Error) => {
      broken = rollbackError; // the connection is unusable: destroy it instead of pooling it
    });
    if (sqlStateOf(error) === IN_FAILED_TRANSACTION) {
      // The action swallowed an SQL error; the kit's next statement found the transaction aborted.
      throw new Error(ABORTED, { cause: error });
    }
    // The database's own reason, rather than node-postgres's "not queryable" for the next statement.
    throw lost ?? error;
  } finally {
    client.off('error', onLost);
    client.release(broken ?? lost);
  }
}
