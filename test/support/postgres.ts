/**
 * PostgreSQL for the suites: one scratch database per test file (or per call), created on the
 * local server and dropped afterwards, so suites never see each other's rows.
 *
 * Reachability decides the rest: locally an unreachable server skips the PostgreSQL suites with a
 * printed reason; in CI (`CI=true`) it fails them loudly, because "a suite never skips silently".
 * Set TEST_POSTGRES_URL to use another server (default postgres://postgres@127.0.0.1:5432/test).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const ADMIN_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const inCi = process.env.CI === 'true' || process.env.CI === '1';

async function probe(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return (error as Error).message;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Why PostgreSQL cannot be used here, or undefined when it can. Throws in CI instead of skipping. */
export const postgresUnavailable: string | undefined = await (async () => {
  const problem = await probe();
  if (problem === undefined) return undefined;
  const reason = `PostgreSQL at ${new URL(ADMIN_URL).host} is unreachable (${problem})`;
  if (inCi) throw new Error(`${reason}: in CI the PostgreSQL suites must run (.ci/run starts the server).`);
  console.warn(`SKIPPING the PostgreSQL suites: ${reason}. Start it, or set TEST_POSTGRES_URL.`);
  return reason;
})();

export interface TestDatabase {
  name: string;
  /** Connection string of the scratch database (for child processes). */
  url: string;
  /** A pool on it, for the test itself. */
  pool: pg.Pool;
  /** Ends the pool and drops the database (after 2 s, terminating connections still open). */
  drop(): Promise<void>;
}

function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

/**
 * Creates `verify_kit_test_<pid>_<random>` and a pool on it. `icuLocale`: the database's text
 * sorts by that ICU locale (as a server set up with en_US.UTF-8 sorts by glibc's), not the server's default.
 */
export async function createTestDatabase(options: { max?: number; icuLocale?: string } = {}): Promise<TestDatabase> {
  const name = `verify_kit_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    const locale =
      options.icuLocale === undefined
        ? ''
        : ` LOCALE_PROVIDER icu ICU_LOCALE '${options.icuLocale.replaceAll("'", "''")}' TEMPLATE template0`;
    await admin.query(`CREATE DATABASE ${name}${locale}`);
  } finally {
    await admin.end();
  }
  const url = withDatabase(ADMIN_URL, name);
  const pool = new pg.Pool({ connectionString: url, max: options.max ?? 10 });
  let dropped = false;
  return {
    name,
    url,
    pool,
    async drop() {
      if (dropped) return;
      dropped = true;
      await pool.end().catch(() => {});
      const client = new pg.Client({ connectionString: ADMIN_URL });
      await client.connect();
      try {
        // Ended pools close their sockets a moment later: wait for that rather than terminating
        // them (a terminated client that is still ending raises an error nobody listens to).
        for (let tries = 0; ; tries++) {
          try {
            await client.query(`DROP DATABASE IF EXISTS ${name}${tries >= 40 ? ' WITH (FORCE)' : ''}`);
            break;
          } catch (error) {
            if ((error as { code?: string }).code !== '55006' || tries >= 40) throw error; // 55006: still in use
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        }
      } finally {
        await client.end();
      }
    },
  };
}

/**
 * A pool of one connection that records the text of every statement sent on it, so a test can
 * count the round trips a store call makes.
 */
export function recordingPool(url: string): { pool: pg.Pool; sent: string[] } {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  const sent: string[] = [];
  pool.on('connect', (client) => {
    const send = client.query.bind(client) as (...args: unknown[]) => unknown;
    client.query = ((config: unknown, ...rest: unknown[]) => {
      sent.push(typeof config === 'string' ? config : (config as { text: string }).text);
      return send(config, ...rest);
    }) as typeof client.query;
  });
  return { pool, sent };
}
