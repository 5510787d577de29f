/**
 * `hosted-sms-verify-kit sweep --loop --config` on PostgreSQL when the database ends the job's
 * connections between runs (a restart, a failover, an operator's pg_terminate_backend): node-postgres
 * reports an idle connection's end as an 'error' event on the pool, and an unheard one ends the
 * process with a stack trace. The job says so in one line, without the database password, and
 * sweeps on at its next run. Runs the bin as built (needs `npm run build`), its timers sixty times
 * faster (test/fixtures/scaled-timers.mjs): the default 60 s interval passes in one second.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVerifyClient } from '../../middleware/client/client.ts';
import { createPostgresStore, type PostgresStore } from '../../middleware/store/postgres/postgres.ts';
import { builtFile } from '../support/built.ts';
import { useTestEmulator } from '../support/emulator.ts';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../support/postgres.ts';
import { jsonLines } from '../support/sweep-bench.ts';
import { waitFor } from '../support/wait-for.ts';

const MAIN = builtFile('cli/main.js');
const POSTGRES = builtFile('middleware/store/postgres/postgres.js');
const SCALED_TIMERS = fileURLToPath(new URL('../fixtures/scaled-timers.mjs', import.meta.url));
const REPOSITORY_PACKAGE = fileURLToPath(new URL('../../package.json', import.meta.url));
const CLIENT = { clientId: 'lost-client', secret: 'lost-secret-0123456789', returnUrl: 'http://localhost:3997/r' };
const DATABASE_PASSWORD = 'Db-Passw0rd-Never-Printed';
/** How the test finds the job's backends in pg_stat_activity. */
const APPLICATION = 'verify_sweep_job';

const emulator = useTestEmulator({ clients: [CLIENT] });

describe.skipIf(postgresUnavailable !== undefined)('the sweep job when the database ends its connections', () => {
  let database: TestDatabase;
  let store: PostgresStore;
  let dir: string;
  beforeAll(async () => {
    database = await createTestDatabase();
    store = createPostgresStore({ pool: database.pool });
    await store.ready;
    dir = mkdtempSync(join(tmpdir(), 'verify-lost-'));
    // The documented configuration: the app's own Pool (its idle connections kept between runs), ended by the job.
    writeFileSync(
      join(dir, 'verify.config.mjs'),
      `import { createRequire } from 'node:module';
       import { createPostgresStore } from ${JSON.stringify(POSTGRES)};
       const pg = createRequire(${JSON.stringify(REPOSITORY_PACKAGE)})('pg');
       const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, idleTimeoutMillis: 600000 });
       export default {
         kit: {
           baseUrl: process.env.VERIFY_BASE_URL, clientId: ${JSON.stringify(CLIENT.clientId)},
           clientSecret: process.env.VERIFY_CLIENT_SECRET, returnUrl: ${JSON.stringify(CLIENT.returnUrl)},
           store: createPostgresStore({ pool }), logger: { info() {}, warn() {}, error() {} },
           actions: [{ name: 'confirm_phone', operationSensitivity: 'normal', successPath: '/', fulfil: () => {} }],
         },
         close: () => pool.end(),
       };`,
    );
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await database?.drop();
  });

  /** A verified session on the service, its attempt stored and due now. */
  async function verifiedAttempt(): Promise<string> {
    const client = createVerifyClient({
      baseUrl: emulator.url,
      clientId: CLIENT.clientId,
      clientSecret: CLIENT.secret,
    });
    try {
      const state = randomBytes(16).toString('base64url');
      const request = { returnUrl: CLIENT.returnUrl, destination: '+15550100001', userRef: 'user-lost', state };
      const session = await client.createSession(
        { ...request, operationSensitivity: 'normal', platform: 'web' },
        `key-${state}`,
      );
      const now = Date.now();
      await store.insertAttempt({
        state,
        sessionId: session.sessionId,
        userRef: 'user-lost',
        action: 'confirm_phone',
        params: null,
        destination: '+15550100001',
        returnTo: '/',
        sensitivity: 'normal',
        platform: 'web',
        createdAt: now,
        nextCheckAt: now,
      });
      expect((await emulator.control.complete(session.sessionId, { outcome: 'verified' })).status).toBe(200);
      return state;
    } finally {
      await client.close();
    }
  }

  it('--loop: its idle connections terminated between runs, it prints one line saying so (no password, no stack) and sweeps on at the next run', async () => {
    const url = new URL(database.url);
    url.password = DATABASE_PASSWORD; // trust authentication ignores it; the job must never print it
    url.searchParams.set('application_name', APPLICATION);
    const child = spawn(
      process.execPath,
      ['--import', SCALED_TIMERS, MAIN, 'sweep', '--loop', '--config', './verify.config.mjs'],
      {
        cwd: dir,
        env: {
          PATH: process.env.PATH ?? '',
          TEST_TIMER_SCALE: '60',
          DATABASE_URL: url.toString(),
          VERIFY_BASE_URL: emulator.url,
          VERIFY_CLIENT_SECRET: CLIENT.secret,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    let exitCode: number | string | null | undefined;
    const exited = new Promise<number | string | null>((resolve) =>
      child.on('exit', (code, signal) => resolve((exitCode = signal ?? code))),
    );
    const runs = () => jsonLines(stdout).filter((line) => line.event === 'sweep').length;
    try {
      await waitFor(() => runs() >= 1 || exitCode !== undefined, 20_000, 'the first run');
      const terminate = `SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity
        WHERE application_name = $1 AND datname = current_database()`;
      const terminated = Number((await database.pool.query(terminate, [APPLICATION])).rows[0].n);
      expect(terminated).toBeGreaterThan(0);
      const state = await verifiedAttempt();
      const fulfilled = async () => (await store.findAttemptByState(state))?.outcome === 'fulfilled';
      await waitFor(async () => (await fulfilled()) || exitCode !== undefined, 20_000, 'the next run to sweep');
      expect(exitCode, `the job died: ${stderr}`).toBeUndefined();
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (exitCode === undefined) child.kill('SIGKILL');
    }
    const lost = jsonLines(stdout).filter((line) => line.event === 'sweep_connection_lost');
    expect(lost.length).toBeGreaterThan(0);
    expect(lost[0]).toMatchObject({ error: { message: 'terminating connection due to administrator command' } });
    expect(jsonLines(stdout).filter((line) => line.event === 'sweep_failed')).toEqual([]);
    expect(stderr).not.toMatch(/\n\s+at /);
    expect(stdout + stderr).not.toContain(DATABASE_PASSWORD);
  });
});
