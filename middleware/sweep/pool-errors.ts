/**
 * A PostgreSQL store's Pool (node-postgres) emits 'error' when the database ends one of its idle
 * connections (a restart, a failover, an operator's pg_terminate_backend). With nobody listening,
 * node ends the process on it with a stack trace; the pool has already dropped that connection and
 * opens a new one for its next query, so the sweep job reports it in a line and sweeps on.
 */
import { describeError } from '../logger.ts';

interface ErrorEmitter {
  on(event: 'error', listener: (error: unknown) => void): unknown;
  off(event: 'error', listener: (error: unknown) => void): unknown;
}

function isErrorEmitter(value: unknown): value is ErrorEmitter {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as ErrorEmitter).on === 'function' &&
    typeof (value as ErrorEmitter).off === 'function'
  );
}

/** The store's pool when it has one to listen to (the PostgreSQL store's `pool`), else undefined. */
export function poolOf(store: unknown): ErrorEmitter | undefined {
  try {
    const pool = (store as { pool?: unknown } | null)?.pool;
    return isErrorEmitter(pool) ? pool : undefined;
  } catch {
    return undefined; // a custom store's getter that throws has no pool for the job to hear
  }
}

/**
 * Reports each error the store's pool emits as a `sweep_connection_lost` line until the returned
 * function is called; a store without a pool is left alone.
 */
export function reportLostConnections(store: unknown, emit: (line: Record<string, unknown>) => void): () => void {
  const pool = poolOf(store);
  if (pool === undefined) return () => {};
  const onError = (error: unknown) => emit({ event: 'sweep_connection_lost', error: describeError(error) });
  pool.on('error', onError);
  return () => void pool.off('error', onError);
}
