/**
 * The recipe of docs/demo.md "Several instances", run as written: two demo processes
 * (demo-app/run.ts, not a fixture) started at once on one PostgreSQL database, one emulator named
 * by VERIFY_BASE_URL, the second with SWEEP_WORKER=off, both behind one origin (a small proxy, as
 * a load balancer). A user signs in on A, starts on B, lands on A: fulfilled once, the success
 * page says so, a landing on B is a replay. Each banner names its own instance; a start that
 * skips the shared origin is refused and the log names both origins. Needs `npm run build`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../emulator/index.ts';
import { createPostgresStore } from '../../middleware/store/postgres/postgres.ts';
import { parseHandoffPage } from '../support/agent.ts';
import { controlApi } from '../support/emulator.ts';
import { closeServer, freePort, listen } from '../support/listen.ts';
import { waitFor } from '../support/wait-for.ts';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../support/postgres.ts';

const CLIENT_ID = 'demo-client';
const CLIENT_SECRET = `instances-${randomBytes(12).toString('hex')}`;
const SESSION_SECRET = `instances-session-${randomBytes(12).toString('hex')}`;

interface Instance {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
  /** This instance's own address, as its banner prints it. */
  url: string;
}

let database: TestDatabase;
let emulator: RunningEmulator;
let proxy: Server;
let publicOrigin: string;
let a: Instance;
let b: Instance;
/** The instance the proxy sends the next request to (a load balancer's choice, made by the test). */
let target: Instance;

function startInstance(extra: Record<string, string>): Omit<Instance, 'url'> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '../../demo-app/run.ts')], {
    env: {
      PATH: process.env.PATH ?? '',
      PORT: '0',
      DATABASE_URL: database.url,
      VERIFY_BASE_URL: emulator.url,
      VERIFY_CLIENT_ID: CLIENT_ID,
      VERIFY_CLIENT_SECRET: CLIENT_SECRET,
      VERIFY_RETURN_URL: `${publicOrigin}/verify/return`,
      SESSION_SECRET,
      ...extra,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

async function banner(instance: Omit<Instance, 'url'>): Promise<Instance> {
  await waitFor(() => instance.output().includes('Ctrl-C stops everything'), 30_000, 'the banner');
  const url = /This instance\s+(http:\/\/localhost:\d+)/.exec(instance.output())?.[1];
  expect(url, instance.output()).toBeDefined();
  return { ...instance, url: url! };
}

/** One origin for both instances: forwards each request, headers and body unchanged, to `target`. */
function startProxy(): Server {
  return createServer((req, res) => {
    const upstream = httpRequest(`${target.url}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
}

/** A browser's cookie jar (the demo.sid cookie), whichever instance answers. */
class Browser {
  cookie = '';
  async fetch(
    url: string,
    init: { method?: string; headers?: Record<string, string>; form?: Record<string, string> } = {},
  ) {
    const headers: Record<string, string> = { ...init.headers };
    if (this.cookie !== '') headers.cookie = this.cookie;
    if (init.form !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
    const response = await fetch(url, {
      method: init.method ?? 'GET',
      headers,
      redirect: 'manual',
      ...(init.form === undefined ? {} : { body: new URLSearchParams(init.form).toString() }),
    });
    const sid = response.headers.getSetCookie().find((c) => c.startsWith('demo.sid='));
    if (sid !== undefined) this.cookie = sid.split(';')[0]!;
    return { status: response.status, location: response.headers.get('location'), text: await response.text() };
  }
}

describe.skipIf(postgresUnavailable !== undefined)('two demo instances on one PostgreSQL database, one origin', () => {
  beforeAll(async () => {
    database = await createTestDatabase({ max: 2 });
    const proxyPort = await freePort('localhost');
    publicOrigin = `http://localhost:${proxyPort}`;
    emulator = await startEmulator({
      port: 0,
      host: '127.0.0.1',
      clients: [{ clientId: CLIENT_ID, secret: CLIENT_SECRET, returnUrl: `${publicOrigin}/verify/return` }],
      control: true,
      log: () => {},
    });
    // Started together, as two `npm run demo` would be: the demo's and the kit's migrations take their locks.
    const starting = [startInstance({}), startInstance({ SWEEP_WORKER: 'off' })];
    [a, b] = (await Promise.all(starting.map(banner))) as [Instance, Instance];
    proxy = startProxy();
    await listen(proxy, { port: proxyPort, host: 'localhost' });
  }, 60_000);

  afterAll(async () => {
    for (const instance of [a, b]) {
      if (instance !== undefined && instance.child.exitCode === null) instance.child.kill('SIGKILL');
    }
    if (proxy !== undefined) await closeServer(proxy);
    await emulator?.close();
    await database?.drop();
  });

  it('each banner names its own instance and the shared origin; B runs no sweep worker', () => {
    expect(a.url).not.toBe(b.url);
    for (const instance of [a, b]) {
      expect(instance.output()).toMatch(new RegExp(`Demo app\\s+${publicOrigin}\\s`));
      expect(instance.output()).toContain(`This instance   ${instance.url}`);
    }
    expect(a.output()).toMatch(/Sweep worker\s+every 30 s, in this process/);
    expect(b.output()).toMatch(/Sweep worker\s+off in this instance \(SWEEP_WORKER=off\)/);
  });

  it('signs in on A, starts on B, lands on A: fulfilled once, "Phone confirmed"; a landing on B is a replay', async () => {
    const browser = new Browser();
    target = a;
    const signin = await browser.fetch(`${publicOrigin}/signin`);
    const signed = await browser.fetch(`${publicOrigin}/signin`, {
      method: 'POST',
      headers: { origin: publicOrigin },
      form: { _csrf: /name="_csrf" value="([^"]+)"/.exec(signin.text)![1]!, userId: 'usr_alice' },
    });
    expect(signed.status).toBe(303);

    target = b;
    const home = await browser.fetch(`${publicOrigin}/`);
    const token = new RegExp(
      'name="_csrf" value="([^"]+)">\\s*<input type="hidden" name="action" value="confirm_phone"',
    ).exec(home.text)?.[1];
    expect(token, home.text.slice(0, 300)).toBeDefined();
    const form = { _csrf: token!, action: 'confirm_phone' };
    const headers = { origin: publicOrigin, 'sec-fetch-site': 'same-origin' };
    const started = await browser.fetch(`${publicOrigin}/verify/start`, { method: 'POST', headers, form });
    expect(started.status, started.text.slice(0, 300)).toBe(200);
    expect(parseHandoffPage(started.text)?.verifyUrl.startsWith(emulator.url)).toBe(true);

    const store = createPostgresStore({ pool: database.pool });
    const [attempt] = await store.listAttempts({ userRef: 'usr_alice', limit: 1 });
    await store.close();
    expect((await controlApi(emulator.url).complete(attempt!.sessionId, { outcome: 'verified' })).status).toBe(200);
    const landing = `${publicOrigin}/verify/return?${new URLSearchParams({ session_id: attempt!.sessionId, state: attempt!.state })}`;

    target = a;
    const landed = await browser.fetch(landing);
    expect(landed).toMatchObject({ status: 303, location: '/verified/phone' });
    const page = await browser.fetch(`${publicOrigin}/verified/phone`);
    expect(page.text).toContain('Phone confirmed: this verification applied it just now.');

    target = b;
    expect(await browser.fetch(landing)).toMatchObject({ status: 303, location: '/verified/phone' });
    expect((await browser.fetch(`${publicOrigin}/verified/phone`)).text).toContain(
      'Phone confirmed: this verification had already been applied, so nothing ran twice.',
    );
    const { rows } = await database.pool.query('SELECT count(*)::int AS n FROM demo_activity WHERE session_id = $1', [
      attempt!.sessionId,
    ]);
    expect(rows[0]).toEqual({ n: 1 });

    // Each instance's log says what it did: B started it and replayed, A ran it.
    const about = (instance: Instance) =>
      instance
        .output()
        .split('\n')
        .filter((line) => line.includes(attempt!.sessionId));
    expect(about(b).some((line) => line.includes('"msg":"verification started"'))).toBe(true);
    expect(about(a).filter((line) => line.includes('"fulfilment":"first"'))).toHaveLength(1);
    expect(about(b).filter((line) => line.includes('"fulfilment":"replay"'))).toHaveLength(1);
    expect(about(b).some((line) => line.includes('"fulfilment":"first"'))).toBe(false);

    // Opened at the instance's own address instead of the shared origin, the start is refused,
    // and the log names both origins.
    const direct = await browser.fetch(`${b.url}/verify/start`, {
      method: 'POST',
      headers: { origin: b.url, 'sec-fetch-site': 'same-origin' },
      form,
    });
    expect(direct.status).toBe(403);
    const refusal = b
      .output()
      .split('\n')
      .find((line) => line.includes('came from another origin'));
    expect(refusal).toContain(b.url);
    expect(refusal).toContain(publicOrigin);
  });

  it('stops both on SIGTERM with exit code 0, and neither printed the client secret', async () => {
    for (const instance of [a, b]) instance.child.kill('SIGTERM');
    expect(await Promise.all([a.exited, b.exited])).toEqual([0, 0]);
    expect(a.output() + b.output()).not.toContain(CLIENT_SECRET);
    expect(a.output() + b.output()).not.toContain(SESSION_SECRET);
  });
});
