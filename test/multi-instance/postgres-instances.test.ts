/**
 * Several instances on one PostgreSQL database, as PROCESSES: three app instances (the fixture
 * app, test/fixtures/crash-app.ts) behind one public address, and two sweep job processes
 * (test/fixtures/sweep-process.mjs, on the kit as built: needs `npm run build`). Landings spread
 * over the instances, several of them waiting on the attempt at once, fulfil it once; the start
 * limits are one budget for all instances; two sweeps running at the same time share the due work
 * with each attempt fulfilled once; and a sweep killed mid-batch is finished by the other after its
 * lease.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createVerifyClient } from '../../middleware/client/client.ts';
import { createPostgresStore, type PostgresStore } from '../../middleware/store/postgres/postgres.ts';
import type { VerifyClient } from '../../middleware/types.ts';
import { sweepProcessOnBuiltKit } from '../support/built.ts';
import { useTestEmulator } from '../support/emulator.ts';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../support/postgres.ts';
import { ACTION, jsonLines } from '../support/sweep-bench.ts';
import { waitFor } from '../support/wait-for.ts';
import { Agent, testAppSite } from '../support/agent.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const APP = fileURLToPath(new URL('../fixtures/crash-app.ts', import.meta.url));
const CLIENT_ID = 'multi-client';
const CLIENT_SECRET = `multi-secret-${randomBytes(8).toString('hex')}`;
/** The one address users reach the instances at (a load balancer's, in production). */
const PUBLIC_URL = 'http://localhost:3901';
const PER_USER_STARTS = 4;

let database: TestDatabase;
let store: PostgresStore;
let client: VerifyClient;
const children: ChildProcess[] = [];
const emulator = useTestEmulator({
  clients: [{ clientId: CLIENT_ID, secret: CLIENT_SECRET, returnUrl: `${PUBLIC_URL}/verify/return` }],
});

interface Instance {
  url: string;
  child: ChildProcess;
}

interface Tracked {
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | string | null>;
}

function track(child: ChildProcess): Tracked {
  children.push(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | string | null>((resolve) => {
    child.on('exit', (code, signal) => resolve(signal ?? code));
  });
  return { stdout: () => out, stderr: () => err, exited };
}

async function startInstance(): Promise<Instance> {
  const child = spawn(process.execPath, ['--import', 'tsx', APP], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      PORT: '0',
      PUBLIC_URL,
      DATABASE_URL: database.url,
      BASE_URL: emulator.url,
      CLIENT_ID,
      CLIENT_SECRET,
      PER_USER_STARTS: String(PER_USER_STARTS),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const io = track(child);
  await waitFor(() => io.stdout().includes('{"ready"'), 30_000, `an app instance to start: ${io.stderr()}`);
  const line = io
    .stdout()
    .split('\n')
    .find((l) => l.startsWith('{"ready"'))!;
  return { url: (JSON.parse(line) as { ready: string }).ready, child };
}

function startSweep(args: string[], worker: string, extra: Record<string, string> = {}) {
  const child = spawn(process.execPath, [sweepProcessOnBuiltKit(), ...args], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      SWEEP_DATABASE_URL: database.url,
      VERIFY_BASE_URL: emulator.url,
      VERIFY_CLIENT_ID: CLIENT_ID,
      VERIFY_CLIENT_SECRET: CLIENT_SECRET,
      SWEEP_WORKER_NAME: worker,
      ...extra,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { child, ...track(child) };
}

/** `n` real sessions on the service, verified, with their attempts stored for the sweep's action. */
async function verifiedSweepAttempts(n: number): Promise<string[]> {
  const sessionIds: string[] = [];
  for (let i = 0; i < n; i += 10) {
    const chunk = await Promise.all(
      Array.from({ length: Math.min(10, n - i) }, async () => {
        const state = randomBytes(16).toString('base64url');
        const userRef = `user-${randomBytes(4).toString('hex')}`;
        const session = await client.createSession(
          {
            returnUrl: `${PUBLIC_URL}/verify/return`,
            destination: '+15550100001',
            operationSensitivity: 'normal',
            userRef,
            state,
            platform: 'web',
          },
          `key-${state}`,
        );
        const now = Date.now();
        await store.insertAttempt({
          state,
          sessionId: session.sessionId,
          userRef,
          action: ACTION,
          params: null,
          destination: '+15550100001',
          returnTo: '/done',
          sensitivity: 'normal',
          platform: 'web',
          createdAt: now,
          nextCheckAt: now,
        });
        expect((await emulator.control.complete(session.sessionId, { outcome: 'verified' })).status).toBe(200);
        return session.sessionId;
      }),
    );
    sessionIds.push(...chunk);
  }
  return sessionIds;
}

const count = async (sql: string, values: unknown[] = []) => Number((await database.pool.query(sql, values)).rows[0].n);

describe.skipIf(postgresUnavailable !== undefined)('several instances on one PostgreSQL database', () => {
  let instances: Instance[];

  beforeAll(async () => {
    database = await createTestDatabase();
    store = createPostgresStore({ pool: database.pool });
    await store.ready;
    await database.pool.query(
      `CREATE TABLE sweep_effects (
         session_id TEXT NOT NULL, state TEXT NOT NULL, user_ref TEXT NOT NULL, by TEXT NOT NULL)`,
    );
    client = createVerifyClient({ baseUrl: emulator.url, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
    // Three instances starting at once also migrate the same database at once.
    instances = await Promise.all([startInstance(), startInstance(), startInstance()]);
  }, 90_000);
  afterEach(async () => {
    await emulator.control.setFaults({ statusDelayMs: 0, statusFailures: 0 });
  });
  afterAll(async () => {
    for (const child of children.splice(0)) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    await client?.close();
    await database?.drop();
  });

  it('200 concurrent landings of one attempt, spread over three app instances, at least two waiting on it at once, fulfil it exactly once', async () => {
    const owner = await new Agent(testAppSite(instances[0]!.url, PUBLIC_URL)).signIn('lander');
    expect((await owner.tryStart('grant')).status).toBe(200);
    const [lander] = await store.listAttempts({ userRef: 'user-lander', limit: 1 });
    const { sessionId, state } = lander!;
    expect((await emulator.control.complete(sessionId, { outcome: 'verified' })).status).toBe(200);
    const path = `/verify/return?session_id=${encodeURIComponent(sessionId)}&state=${encodeURIComponent(state)}`;
    // The barrier: the test holds the attempt's row, so no landing can mark it until at least two of
    // them wait on it (or on its user's lock) at once, each in its own transaction; then all go on.
    const holder = await database.pool.connect();
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM verify_kit_attempts WHERE session_id = $1 FOR UPDATE', [sessionId]);
    const landings = Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const answer = await fetch(`${instances[i % 3]!.url}${path}`, { redirect: 'manual' });
        return answer.status;
      }),
    );
    const waiting = `SELECT count(*) AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`;
    let waited = 0;
    try {
      await waitFor(
        async () => (waited = await count(waiting)) >= 2,
        20_000,
        'two landings waiting on the attempt at once',
      );
    } finally {
      await holder.query('COMMIT');
      holder.release();
    }
    const answers = await landings;
    console.info(`200 landings on PostgreSQL: ${waited} waiting on the attempt at once when it was let go`);
    // 303 for the owner's browser on the instance holding its session, 200 (neutral page) elsewhere.
    expect(answers.filter((status) => status !== 200 && status !== 303)).toEqual([]);
    expect(await count('SELECT count(*) AS n FROM test_effects WHERE session_id = $1', [sessionId])).toBe(1);
    expect((await store.findAttemptByState(state))?.outcome).toBe('fulfilled');
  });

  it(
    'the start limits are one budget across instances: a user gets exactly their budget of texts, whichever ' +
      'instances they hit',
    async () => {
      const smsBefore = (await emulator.control.stats()).smsSent;
      const users = instances.map((instance) => new Agent(testAppSite(instance.url, PUBLIC_URL)));
      for (const user of users) await user.signIn('limited');
      const answers = await Promise.all(
        Array.from({ length: 9 }, async (_, i) => (await users[i % 3]!.tryStart('grant')).status),
      );
      expect(answers.filter((status) => status === 200)).toHaveLength(PER_USER_STARTS);
      expect(answers.filter((status) => status === 429)).toHaveLength(9 - PER_USER_STARTS);
      expect((await emulator.control.stats()).smsSent - smsBefore).toBe(PER_USER_STARTS);
      const stored = await store.listAttempts({ userRef: 'user-limited', limit: Number.MAX_SAFE_INTEGER });
      expect(stored).toHaveLength(PER_USER_STARTS);
    },
  );

  it('two sweep processes sweeping at the same time share 60 due attempts: each is fulfilled exactly once, and both did some of the work', async () => {
    const sessionIds = await verifiedSweepAttempts(60);
    const ids = sessionIds.map((id) => `'${id}'`).join(',');
    await emulator.control.setFaults({ statusDelayMs: 200 }); // slow reads: one sweep alone takes seconds
    // Both processes start up, then begin together: a slow start-up never leaves one sweeping alone.
    const dir = mkdtempSync(join(tmpdir(), 'pg-sweeps-'));
    const start = join(dir, 'start');
    const settings = { SWEEP_BATCH_SIZE: '5', SWEEP_CONCURRENCY: '4', SWEEP_START_FILE: start };
    const [one, two] = [startSweep(['--once'], 'sweeper-1', settings), startSweep(['--once'], 'sweeper-2', settings)];
    try {
      const ready = () => readdirSync(dir).filter((name) => name.endsWith('.ready')).length;
      await waitFor(() => ready() === 2, 30_000, 'both sweep processes to start up');
      writeFileSync(start, '');
      // They sweep at the same time: at one moment both hold leases on these attempts.
      const owners = `SELECT count(DISTINCT lease_owner) AS n FROM verify_kit_attempts
        WHERE session_id IN (${ids}) AND lease_owner IS NOT NULL`;
      await waitFor(async () => (await count(owners)) >= 2, 20_000, 'both sweep processes to hold leases at once');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(await one.exited, one.stderr()).toBe(0);
    expect(await two.exited, two.stderr()).toBe(0);
    const [r1] = jsonLines(one.stdout());
    const [r2] = jsonLines(two.stdout());
    expect(await count(`SELECT count(*) AS n FROM sweep_effects WHERE session_id IN (${ids})`)).toBe(60);
    const twice = 'SELECT session_id FROM sweep_effects GROUP BY session_id HAVING count(*) > 1';
    expect(await count(`SELECT count(*) AS n FROM (${twice}) d`)).toBe(0);
    expect(Number(r1!.fulfilled) + Number(r2!.fulfilled)).toBe(60);
    expect(Number(r1!.fulfilled)).toBeGreaterThan(0);
    expect(Number(r2!.fulfilled)).toBeGreaterThan(0);
    console.info(`two sweeps on PostgreSQL: sweeper-1 ${r1!.fulfilled}, sweeper-2 ${r2!.fulfilled}`);
  });

  it('a sweep process killed mid-batch (SIGKILL) is recovered by the other once its lease lapses', async () => {
    const sessionIds = await verifiedSweepAttempts(6);
    await emulator.control.setFaults({ statusDelayMs: 10_000 }); // hold every read
    const readsBefore = (await emulator.control.stats()).statusReads;
    const settings = { SWEEP_LEASE_SECONDS: '2', SWEEP_CONCURRENCY: '2', SWEEP_BATCH_SIZE: '50' };
    const victim = startSweep(['--once'], 'victim', settings);
    const midBatch = async () => (await emulator.control.stats()).statusReads >= readsBefore + 2;
    await waitFor(midBatch, 20_000, 'the victim to be mid-batch');
    victim.child.kill('SIGKILL');
    expect(await victim.exited).toBe('SIGKILL');
    const ids = sessionIds.map((id) => `'${id}'`).join(',');
    // SQL: leases are not part of an Attempt or of the store's interface (as in test/support/stores.ts).
    const theirs = `FROM verify_kit_attempts WHERE session_id IN (${ids})`;
    expect(await count(`SELECT count(*) AS n ${theirs} AND lease_owner IS NOT NULL`)).toBe(6);
    const leaseUntil = Number((await database.pool.query(`SELECT max(lease_until) AS t ${theirs}`)).rows[0].t);

    await emulator.control.setFaults({ statusDelayMs: 0 });
    // The survivor runs as a loop from now on: its runs before the lease lapses find nothing to claim.
    const survivor = startSweep([], 'survivor', { SWEEP_INTERVAL_SECONDS: '0.3' });
    await waitFor(
      async () => (await count(`SELECT count(*) AS n FROM sweep_effects WHERE session_id IN (${ids})`)) === 6,
      30_000,
      "the survivor to finish the killed sweep's batch",
    );
    const fulfilledAt = (await database.pool.query(`SELECT min(fulfilled_at) AS t ${theirs}`)).rows[0].t;
    expect(Number(fulfilledAt)).toBeGreaterThanOrEqual(leaseUntil);
    survivor.child.kill('SIGTERM');
    expect(await survivor.exited).toBe(0);
    const runs = jsonLines(survivor.stdout()).filter((line) => line.event === 'sweep');
    expect(runs.reduce((sum, run) => sum + Number(run.fulfilled), 0)).toBe(6);
    const bySurvivor = `SELECT count(*) AS n FROM sweep_effects WHERE session_id IN (${ids}) AND by = 'survivor'`;
    expect(await count(bySurvivor)).toBe(6);
  });
});
