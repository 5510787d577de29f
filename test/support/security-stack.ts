/**
 * The security suites' stack: the demo app (createDemoApp) on http://localhost:<port>, the emulator
 * on 127.0.0.1 (another site), and a small recording proxy between the app's backend client and the
 * emulator. The proxy records every backend exchange and can rewrite the body of GET /session/{id}
 * (the "compromised or buggy service" attacks). A recorder keeps every HTTP exchange of the
 * suite (scripted user agent, backend, browser), every log line of the demo's logger, the console
 * and the emulator, so a leak check can search all of them for the client secret and any handoff.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDemoApp, type DemoApp, type DemoAppOptions } from '../../demo-app/app.ts';
import { startTestEmulator, type ControlApi } from './emulator.ts';
import { closeServer, listen } from './listen.ts';
import { DEMO_USERS, type DemoUserKey } from './users.ts';
import { Agent, formToken, type Exchange, type Headers, type Site } from './agent.ts';
import type { AttemptRecord } from '../../middleware/store/types.ts';

export interface Recorder {
  exchanges: Exchange[];
  /** Demo logger lines, console lines, emulator lines. */
  logs: string[];
}

export type StatusTamper = (body: Record<string, unknown>, sessionId: string) => Record<string, unknown>;

export interface SecStack {
  /** A new scripted agent on the demo, recording into `recorder`. */
  agent(): Agent;
  demoUrl: string;
  returnUrl: string;
  /** The emulator itself (the hosted page, control API). */
  emulatorUrl: string;
  /** What the demo's backend client talks to: the recording proxy in front of the emulator. */
  serviceUrl: string;
  control: ControlApi;
  demo: DemoApp;
  clientId: string;
  clientSecret: string;
  databasePath: string;
  recorder: Recorder;
  /** Set to rewrite the next GET /session/{id} bodies the app reads (undefined = faithful). */
  tamper: StatusTamper | undefined;
  close(): Promise<void>;
}

function flatHeaders(headers: IncomingHttpHeaders | Record<string, string | string[] | number | undefined>): Headers {
  const out: Headers = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join('\n') : String(value);
  }
  return out;
}

function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

/** The recording (and optionally rewriting) proxy between the app's backend and the emulator. */
export async function startServiceProxy(
  target: string,
  stack: { tamper: StatusTamper | undefined },
  recorder: Recorder,
) {
  const upstream = new URL(target);
  const server = createServer(async (req, res) => {
    const requestBody = await readAll(req);
    const headers = { ...req.headers, host: upstream.host };
    const forward = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers },
      async (answer) => {
        let body = await readAll(answer).catch(() => undefined);
        if (body === undefined) {
          res.destroy();
          return;
        }
        const responseHeaders = flatHeaders(answer.headers);
        const match = req.method === 'GET' ? /^\/session\/([^/?]+)$/.exec(req.url ?? '') : null;
        if (match !== null && stack.tamper !== undefined && (answer.statusCode ?? 0) === 200) {
          const parsed = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
          body = Buffer.from(JSON.stringify(stack.tamper(parsed, decodeURIComponent(match[1]!))));
          responseHeaders['content-length'] = String(body.length);
        }
        recorder.exchanges.push({
          who: 'backend',
          method: req.method ?? '',
          url: `${target}${req.url ?? ''}`,
          requestHeaders: flatHeaders(req.headers),
          requestBody: requestBody.toString('utf8'),
          status: answer.statusCode ?? 0,
          responseHeaders,
          responseBody: body.toString('utf8'),
        });
        res.writeHead(answer.statusCode ?? 502, responseHeaders);
        res.end(body);
      },
    );
    // The emulator dropped the connection (an injected reset): drop ours too, like a real network.
    forward.on('error', () => res.destroy());
    forward.end(requestBody);
  });
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => closeServer(server),
  };
}

/** Captures console output while the suite runs (restored by the returned function). */
export function captureConsole(into: string[]): () => void {
  const methods = ['log', 'info', 'warn', 'error', 'debug'] as const;
  const saved = methods.map((m) => console[m]);
  for (const m of methods) {
    console[m] = (...args: unknown[]) => {
      into.push(
        args
          .map((a) => (typeof a === 'string' ? a : a instanceof Error ? `${a.message}\n${a.stack}` : JSON.stringify(a)))
          .join(' '),
      );
    };
  }
  return () => {
    methods.forEach((m, i) => {
      console[m] = saved[i]!;
    });
  };
}

/**
 * `startLimits`: the demo's start-limit budgets; suites that are not about the limits pass
 * GENEROUS_START_LIMITS (test/support/limits.ts), the limits' suite keeps the demo's own.
 */
export async function startSecStack(
  options: { now?: () => number; startLimits?: DemoAppOptions['startLimits'] } = {},
): Promise<SecStack> {
  const dir = mkdtempSync(join(tmpdir(), 'sec-stack-'));
  const recorder: Recorder = { exchanges: [], logs: [] };
  const server = createServer();
  const port = await listen(server);
  const demoUrl = `http://localhost:${port}`;
  const returnUrl = `${demoUrl}/verify/return`;
  const clientId = 'demo-client';
  const clientSecret = `sec-${randomBytes(16).toString('hex')}`;
  const emulator = await startTestEmulator({
    clients: [{ clientId, secret: clientSecret, returnUrl, platform: 'web' }],
    log: (line) => recorder.logs.push(`[emulator] ${line}`),
  });
  const holder = { tamper: undefined as StatusTamper | undefined };
  const proxy = await startServiceProxy(emulator.url, holder, recorder);
  const line = (level: string) => (obj: Record<string, unknown>, msg?: string) =>
    recorder.logs.push(JSON.stringify({ level, msg, ...obj }));
  const databasePath = join(dir, 'demo.sqlite');
  const demo = createDemoApp({
    verifyBaseUrl: proxy.url,
    clientId,
    clientSecret,
    returnUrl,
    databasePath,
    sessionSecret: `sec-session-${randomBytes(16).toString('hex')}`,
    trustProxy: false,
    logger: { info: line('info'), warn: line('warn'), error: line('error') },
    ...(options.now === undefined ? {} : { now: options.now }),
    ...(options.startLimits === undefined ? {} : { startLimits: options.startLimits }),
  });
  server.on('request', demo.app);
  const stack: SecStack = {
    agent: () => new Agent(demoSite(stack), { record: (exchange) => recorder.exchanges.push(exchange) }),
    demoUrl,
    returnUrl,
    emulatorUrl: emulator.url,
    serviceUrl: proxy.url,
    control: emulator.control,
    demo,
    clientId,
    clientSecret,
    databasePath,
    recorder,
    get tamper() {
      return holder.tamper;
    },
    set tamper(value) {
      holder.tamper = value;
    },
    async close() {
      await closeServer(server);
      await demo.close();
      await proxy.close();
      await emulator.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return stack;
}

/** The demo as the scripted agent sees it: sign-in by its page, attempts from its store, codes from the emulator. */
export function demoSite(stack: Pick<SecStack, 'demoUrl' | 'demo' | 'control'>): Site {
  return {
    url: stack.demoUrl,
    signIn: signInOnDemo,
    latestAttempt: async () => latestAttempt(stack),
    control: stack.control,
  };
}

/** The demo's sign-in page, then its home page for the kit's start token and the demo's own token. */
async function signInOnDemo(agent: Agent, user: string): Promise<{ csrf: string; siteCsrf: string }> {
  const page = await agent.request('/signin');
  const token = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1];
  if (token === undefined) throw new Error(`no sign-in token: ${page.status}`);
  const answer = await agent.postForm(
    '/signin',
    { _csrf: token, userId: DEMO_USERS[user as DemoUserKey].id },
    { origin: agent.origin, 'sec-fetch-site': 'same-origin' },
  );
  if (answer.status !== 303 || answer.location !== '/')
    throw new Error(`sign-in failed: ${answer.status} ${answer.body.slice(0, 200)}`);
  const home = await agent.request('/');
  if (home.status !== 200) throw new Error(`home answered ${home.status}`);
  const csrf = formToken(home.body, /<form method="post" action="\/verify\/start">\s*/);
  if (csrf === undefined) throw new Error('no kit token on the home page');
  return { csrf, siteCsrf: formToken(home.body, /<form[^>]*action="\/signout"[^>]*>\s*/) ?? '' };
}

/** The newest attempt in the demo's store (the one a start just made). */
export async function latestAttempt(stack: Pick<SecStack, 'demo'>): Promise<AttemptRecord> {
  const [newest] = await stack.demo.store.listAttempts({ limit: 1 });
  if (newest === undefined) throw new Error('no attempt stored');
  return newest;
}

export function attemptOf(stack: Pick<SecStack, 'demo'>, sessionId: string): Promise<AttemptRecord | undefined> {
  return stack.demo.store.findAttemptBySessionId(sessionId);
}

/** Fulfilments recorded by the demo's actions for a session (its activity rows). */
export function fulfilments(stack: SecStack, sessionId: string): number {
  return (
    stack.demo.db.prepare('SELECT COUNT(*) AS n FROM demo_activity WHERE session_id = ?').get(sessionId) as {
      n: number;
    }
  ).n;
}

export function activityOf(stack: SecStack, userId: string): number {
  return (
    stack.demo.db.prepare('SELECT COUNT(*) AS n FROM demo_activity WHERE user_id = ?').get(userId) as { n: number }
  ).n;
}

/**
 * Row counts of every table in the database, plus the full content of the tables an attack could
 * change (users, payout accounts, activity) and every attempt the kit's store holds. Sessions are counted only: `rolling`
 * sessions refresh their expiry on every request.
 */
export async function snapshot(stack: SecStack): Promise<Record<string, unknown>> {
  const db = stack.demo.db;
  const tables = (
    db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]
  ).map((t) => t.name);
  const out: Record<string, unknown> = {};
  for (const name of tables) {
    out[`count:${name}`] = (db.prepare(`SELECT COUNT(*) AS n FROM "${name}"`).get() as { n: number }).n;
  }
  for (const name of ['demo_users', 'demo_payout_accounts', 'demo_activity']) {
    if (tables.includes(name)) out[name] = db.prepare(`SELECT * FROM "${name}" ORDER BY 1`).all();
  }
  // The kit's attempts through its store, oldest first.
  out.verify_kit_attempts = (await stack.demo.store.listAttempts({ limit: Number.MAX_SAFE_INTEGER })).reverse();
  return out;
}

/** Paths the demo and the kit may redirect to: all fixed on the server. */
export const SERVER_CHOSEN_LOCATIONS: RegExp[] = [
  /^\/$/,
  /^\/signin$/,
  /^\/verified\/phone$/,
  /^\/verified\/payout$/,
  /^\/verify\/start-again\?action=(confirm_phone|change_payout)$/,
];

/** Every Location the demo sent during the suite that is not a fixed, same-origin, server-chosen path. */
export function foreignLocations(stack: SecStack): string[] {
  const bad: string[] = [];
  for (const x of stack.recorder.exchanges) {
    if (x.who === 'backend') continue;
    if (!x.url.startsWith(`${stack.demoUrl}/`)) continue;
    const location = x.responseHeaders.location;
    if (location === undefined) continue;
    const resolved = new URL(location, x.url);
    const sameOrigin = resolved.origin === stack.demoUrl;
    const fixed = SERVER_CHOSEN_LOCATIONS.some((re) => re.test(location));
    if (!sameOrigin || !fixed) bad.push(`${x.method} ${x.url} -> ${location}`);
  }
  return bad;
}

/** Handoffs the service issued (seen in the backend's POST /session answers). */
export function issuedHandoffs(stack: SecStack): string[] {
  const out: string[] = [];
  for (const x of stack.recorder.exchanges) {
    if (x.who !== 'backend' || x.method !== 'POST' || !x.url.endsWith('/session') || x.status !== 200) continue;
    const handoff = (JSON.parse(x.responseBody) as { handoff?: unknown }).handoff;
    if (typeof handoff === 'string') out.push(handoff);
  }
  return out;
}

/**
 * Searches every recorded exchange (URL, every header, body) and log line for the client secret
 * (raw, Basic-encoded, URL-encoded) and for every handoff the service issued. Allowed places:
 * the secret only in the Authorization header of the app's backend calls; a handoff only in the
 * service's create answer, the kit's auto-submit page (the POST /verify/start answer) and the
 * browser's form POST to verifyUrl.
 */
export function leaks(stack: SecStack, extraHandoffs: string[] = []): string[] {
  const secretForms = [
    stack.clientSecret,
    encodeURIComponent(stack.clientSecret),
    Buffer.from(`${stack.clientId}:${stack.clientSecret}`).toString('base64'),
  ];
  const handoffs = [...new Set([...issuedHandoffs(stack), ...extraHandoffs])];
  const handoffForms = handoffs.flatMap((h) => [h, encodeURIComponent(h)]);
  const found: string[] = [];
  const search = (where: string, text: string, secretAllowed: boolean, handoffAllowed: boolean) => {
    if (!secretAllowed) for (const s of secretForms) if (text.includes(s)) found.push(`secret in ${where}`);
    if (!handoffAllowed) for (const h of handoffForms) if (text.includes(h)) found.push(`handoff in ${where}`);
  };
  for (const x of stack.recorder.exchanges) {
    const at = `${x.who} ${x.method} ${x.url}`;
    const isCreate = x.who === 'backend' && x.method === 'POST' && x.url.endsWith('/session');
    const isStart =
      x.who !== 'backend' && x.method === 'POST' && x.url === `${stack.demoUrl}/verify/start` && x.status === 200;
    const isRedeem = x.who !== 'backend' && x.method === 'POST' && x.url === `${stack.emulatorUrl}/verify`;
    search(`${at} (URL)`, x.url, false, false);
    for (const [name, value] of Object.entries(x.requestHeaders)) {
      search(`${at} request header ${name}`, value, x.who === 'backend' && name === 'authorization', false);
    }
    for (const [name, value] of Object.entries(x.responseHeaders))
      search(`${at} response header ${name}`, value, false, false);
    search(`${at} request body`, x.requestBody, false, isRedeem);
    search(`${at} response body`, x.responseBody, false, isCreate || isStart);
  }
  for (const line of stack.recorder.logs) search(`log line ${line.slice(0, 80)}`, line, false, false);
  return found;
}
