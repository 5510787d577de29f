/**
 * Scratch PostgreSQL databases for the bench: one per measurement, created on the local server and
 * dropped afterwards. TEST_POSTGRES_URL names the server (default postgres://postgres@127.0.0.1:5432/test).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

const ADMIN_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface TestDatabase {
  name: string;
  /** Connection string of the scratch database (for child processes). */
  url: string;
  /** A pool on it, for the orchestrator itself. */
  pool: pg.Pool;
  /** Ends the pool and drops the database (after 2 s, terminating connections still open). */
  drop(): Promise<void>;
}

function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

/** Creates `verify_kit_test_<pid>_<random>` and a pool on it. */
export async function createTestDatabase(options: { max?: number } = {}): Promise<TestDatabase> {
  const name = `verify_kit_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
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
      await dropDatabase(name);
    },
  };
}

/** Drops `name`, waiting for an ended pool's sockets to close (forcing after 2 s). */
async function dropDatabase(name: string): Promise<void> {
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
}
