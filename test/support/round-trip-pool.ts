/**
 * A PostgreSQL pool for the round-trip tests of the SMS pumping check: every statement sent, on
 * the pool or on a client checked out for a transaction, is counted and named (a prepared
 * statement by its name, SQL by its start; a client's with `client:` before it), and the next
 * count of the check naming a given user (countPumping, or sureCountPumping, which counts as it
 * reads) can be held, to force a race.
 */
import pg from 'pg';

export interface RoundTripPool {
  pool: pg.Pool;
  /** Statements sent so far. */
  trips(): number;
  /** Their names, in order; empty it to start a new record. */
  log: string[];
  /** Holds the next count naming `user`: `reached` once it is sent (its check read and decided), `go()` runs it. */
  holdCountOf(user: string): { reached: Promise<void>; go: () => void };
}

/** The statements that count a check's text or refusal. */
const COUNTS = new Set(['verify_kit_countPumping', 'verify_kit_sureCountPumping']);

const nameOf = (config: unknown): string =>
  typeof config === 'string' ? config.slice(0, 20) : ((config as { name?: string } | undefined)?.name ?? '?');

export function roundTripPool(connectionString: string, max: number): RoundTripPool {
  const pool = new pg.Pool({ connectionString, max });
  let trips = 0;
  const log: string[] = [];
  let held: { user: string; release: Promise<void>; reached: () => void } | undefined;

  const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
  pool.query = (async (config: unknown, ...rest: unknown[]) => {
    trips += 1;
    log.push(nameOf(config));
    const c = config as { name?: string; values?: unknown[] };
    if (held && COUNTS.has(c?.name ?? '') && ((c.values?.[1] ?? []) as string[]).includes(held.user)) {
      const { release, reached } = held;
      held = undefined;
      reached();
      await release;
    }
    return query(config, ...rest);
  }) as typeof pool.query;

  const connect = pool.connect.bind(pool) as (...args: unknown[]) => Promise<pg.PoolClient>;
  pool.connect = (async (...args: unknown[]) => {
    if (args.length > 0) return connect(...args);
    const client = await connect();
    const clientQuery = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
    const release = client.release.bind(client);
    // Back to the client's own once released: the pool hands it out again.
    client.release = ((...r: unknown[]) => {
      client.query = clientQuery as typeof client.query;
      client.release = release;
      return release(...(r as []));
    }) as typeof client.release;
    client.query = (async (...a: unknown[]) => {
      trips += 1;
      log.push(`client:${nameOf(a[0])}`);
      return clientQuery(...a);
    }) as typeof client.query;
    return client;
  }) as typeof pool.connect;

  return {
    pool,
    trips: () => trips,
    log,
    holdCountOf(user) {
      let go!: () => void;
      let reached!: () => void;
      const sent = new Promise<void>((resolve) => (reached = resolve));
      held = { user, release: new Promise<void>((resolve) => (go = resolve)), reached };
      return { reached: sent, go };
    },
  };
}
