/**
 * One attempt on one PostgreSQL database, raced by PROCESSES: three app instances (the fixture app
 * with a mobile kit beside the web one, test/fixtures/crash-app.ts) and a sweep job process
 * (test/fixtures/sweep-process.mjs, on the kit as built: needs `npm run build`), the sweep and the
 * apps' fulfilments waiting on the attempt's row at once. A mobile attempt: its mobile completions
 * spread over the instances, and landings on its session_id and state at their web return URL
 * (read with the web client, which the service answers `pending`: they fulfil nothing). A web
 * attempt: its landings spread over the instances. Whichever wins, the action runs exactly once:
 * one effect row across the app's table and the sweep's, the attempt fulfilled.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresStore, type PostgresStore } from '../../middleware/store/postgres/postgres.ts';
import { MOBILE_RETURN_URL } from '../support/app.ts';
import { sweepProcessOnBuiltKit } from '../support/built.ts';
import { useTestEmulator } from '../support/emulator.ts';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../support/postgres.ts';
import { jsonLines } from '../support/sweep-bench.ts';
import { waitFor } from '../support/wait-for.ts';
import { Agent, testAppSite } from '../support/agent.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const APP = fileURLToPath(new URL('../fixtures/crash-app.ts', import.meta.url));
const WEB = { clientId: 'race-web', secret: `race-web-${randomBytes(8).toString('hex')}` };
const MOBILE = { clientId: 'race-mobile', secret: `race-mobile-${randomBytes(8).toString('hex')}` };
const PUBLIC_URL = 'http://localhost:3902';
/** Every status read takes this long: the sweep claims, then all racers read at once. */
const READ_DELAY_MS = 1500;
const RACERS_PER_ROUTE = 30;

let database: TestDatabase;
let store: PostgresStore;
const children: ChildProcess[] = [];
const emulator = useTestEmulator({
  clients: [
    { clientId: WEB.clientId, secret: WEB.secret, returnUrl: `${PUBLIC_URL}/verify/return` },
    { clientId: MOBILE.clientId, secret: MOBILE.secret, returnUrl: MOBILE_RETURN_URL, platform: 'mobile' },
  ],
});

/** The database's URL with a name for its connections, to tell who waits on a lock. */
const named = (url: string, name: string) => {
  const parsed = new URL(url);
  parsed.searchParams.set('application_name', name);
  return parsed.toString();
};

function track(child: ChildProcess) {
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

async function startInstance(n: number): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', APP], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      PORT: '0',
      PUBLIC_URL,
      DATABASE_URL: named(database.url, `race-app-${n}`),
      BASE_URL: emulator.url,
      CLIENT_ID: WEB.clientId,
      CLIENT_SECRET: WEB.secret,
      MOBILE_CLIENT_ID: MOBILE.clientId,
      MOBILE_CLIENT_SECRET: MOBILE.secret,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const io = track(child);
  await waitFor(() => io.stdout().includes('{"ready"'), 30_000, `an app instance to start: ${io.stderr()}`);
  const line = io
    .stdout()
    .split('\n')
    .find((l) => l.startsWith('{"ready"'))!;
  return (JSON.parse(line) as { ready: string }).ready;
}

function startSweep(platform: 'web' | 'mobile') {
  const client = platform === 'mobile' ? MOBILE : WEB;
  const child = spawn(process.execPath, [sweepProcessOnBuiltKit(), '--once'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      SWEEP_DATABASE_URL: named(database.url, 'race-sweep'),
      VERIFY_BASE_URL: emulator.url,
      VERIFY_CLIENT_ID: client.clientId,
      VERIFY_CLIENT_SECRET: client.secret,
      SWEEP_WORKER_NAME: 'race-sweep',
      SWEEP_ACTION: 'grant',
      SWEEP_PLATFORM: platform,
      // The attempt is due at once for this sweep, as for one running minutes after the start.
      SWEEP_CLOCK_OFFSET_MS: String(5 * 60_000),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return track(child);
}

const count = async (sql: string, values: unknown[] = []) => Number((await database.pool.query(sql, values)).rows[0].n);

describe.skipIf(postgresUnavailable !== undefined)('one attempt raced across processes on PostgreSQL', () => {
  let instances: string[];

  beforeAll(async () => {
    database = await createTestDatabase();
    store = createPostgresStore({ pool: database.pool });
    await store.ready;
    await database.pool.query(
      `CREATE TABLE sweep_effects (
         session_id TEXT NOT NULL, state TEXT NOT NULL, user_ref TEXT NOT NULL, by TEXT NOT NULL)`,
    );
    instances = await Promise.all([startInstance(0), startInstance(1), startInstance(2)]);
  }, 90_000);
  afterEach(async () => {
    await emulator.control.setFaults({ statusDelayMs: 0 });
  });
  afterAll(async () => {
    for (const child of children.splice(0)) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    await database?.drop();
  });

  /** One round: returns who fulfilled the attempt ('app' or 'sweep'). */
  async function race(user: string, platform: 'web' | 'mobile'): Promise<string> {
    const owner = await new Agent(testAppSite(instances[0]!, PUBLIC_URL)).signIn(user);
    const started =
      platform === 'mobile'
        ? await owner.request('/m/verify/start', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ action: 'grant' }),
          })
        : await owner.tryStart('grant');
    expect(started.status, started.body).toBe(200);
    const [attempt] = await store.listAttempts({ userRef: `user-${user}`, limit: 1 });
    const { sessionId, state } = attempt!;
    expect(attempt!.platform).toBe(platform);
    expect((await emulator.control.complete(sessionId, { outcome: 'verified' })).status).toBe(200);
    await emulator.control.setFaults({ statusDelayMs: READ_DELAY_MS });

    // The sweep claims the attempt first (its lease), then reads its status slowly.
    const sweep = startSweep(platform);
    const leased = 'SELECT count(*) AS n FROM verify_kit_attempts WHERE session_id = $1 AND lease_owner IS NOT NULL';
    await waitFor(
      async () => (await count(leased, [sessionId])) === 1,
      30_000,
      `the sweep to claim: ${sweep.stderr()}`,
    );
    // The barrier: the test holds the attempt's row, so no racer can mark it until the sweep and
    // the apps' completions wait on it at once, each in its own transaction; then all go on.
    const holder = await database.pool.connect();
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM verify_kit_attempts WHERE session_id = $1 FOR UPDATE', [sessionId]);
    const body = JSON.stringify({ session_id: sessionId, state });
    const landing = `/verify/return?session_id=${encodeURIComponent(sessionId)}&state=${encodeURIComponent(state)}`;
    const racers = Promise.all([
      ...Array.from({ length: platform === 'mobile' ? RACERS_PER_ROUTE : 0 }, async (_, i) => {
        const answer = await fetch(`${instances[i % 3]!}/verify/mobile/complete`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
        return { route: 'mobile', status: answer.status, body: await answer.text() };
      }),
      ...Array.from({ length: RACERS_PER_ROUTE }, async (_, i) => {
        const answer = await fetch(`${instances[i % 3]!}${landing}`, { redirect: 'manual' });
        return { route: 'landing', status: answer.status, body: '' };
      }),
    ]);
    const waiting = (name: string) => `SELECT count(*) AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND application_name LIKE '${name}'`;
    try {
      await waitFor(
        async () => (await count(waiting('race-sweep'))) >= 1 && (await count(waiting('race-app-%'))) >= 2,
        20_000,
        'the sweep and two completions waiting on the attempt at once',
      );
    } finally {
      await holder.query('COMMIT');
      holder.release();
    }
    const answers = await racers;
    expect(await sweep.exited, sweep.stderr()).toBe(0);
    // Strangers' completions are told `processed`, whoever won; strangers' landings get the neutral
    // page (200). A landing of a mobile attempt at the web return URL reads the session with the web
    // client, which the service answers `pending`: it fulfils nothing.
    for (const answer of answers.filter((a) => a.route === 'mobile')) {
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.body)).toEqual({ outcome: 'processed' });
    }
    expect(answers.filter((a) => a.route === 'landing' && a.status !== 200)).toEqual([]);
    expect(answers.filter((a) => a.route === 'landing')).toHaveLength(RACERS_PER_ROUTE);
    const byApp = await count('SELECT count(*) AS n FROM test_effects WHERE session_id = $1', [sessionId]);
    const bySweep = await count('SELECT count(*) AS n FROM sweep_effects WHERE session_id = $1', [sessionId]);
    expect(byApp + bySweep).toBe(1);
    const settled = await store.findAttemptByState(state);
    expect(settled?.outcome).toBe('fulfilled');
    const [report] = jsonLines(sweep.stdout());
    expect(Number(report!.fulfilled) + Number(report!.alreadyFulfilled ?? 0)).toBeLessThanOrEqual(1);
    expect(Number(report!.fulfilled)).toBe(bySweep);
    return bySweep === 1 ? 'sweep' : 'app';
  }

  it('a mobile attempt: its completions on three instances, landings on them and a sweep process, the sweep and two completions waiting on it at once, fulfil it exactly once', async () => {
    const winners: string[] = [];
    for (let round = 0; round < 3; round++) winners.push(await race(`mobile${round}`, 'mobile'));
    console.info(`mobile attempt races on PostgreSQL, won by: ${winners.join(', ')}`);
  }, 120_000);

  it('a web attempt: its landings on three instances and a sweep process, the sweep and two landings waiting on it at once, fulfil it exactly once', async () => {
    const winners: string[] = [];
    for (let round = 0; round < 3; round++) winners.push(await race(`web${round}`, 'web'));
    console.info(`web attempt races on PostgreSQL, won by: ${winners.join(', ')}`);
  }, 120_000);
});
