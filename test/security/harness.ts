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
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from 'better-sqlite3';
import { createDemoApp, type DemoApp } from '../../demo-app/app.ts';
import { startEmulator } from '../../emulator/index.ts';
import { controlApi, type ControlApi } from '../helpers/emulator.ts';

export type Headers = Record<string, string>;

export interface Exchange {
  /** 'ua': the scripted browser; 'backend': the app's client to the service; 'browser': Chromium. */
  who: 'ua' | 'backend' | 'browser';
  method: string;
  url: string;
  requestHeaders: Headers;
  requestBody: string;
  status: number;
  responseHeaders: Headers;
  responseBody: string;
}

export interface Recorder {
  exchanges: Exchange[];
  /** Demo logger lines, console lines, emulator lines. */
  logs: string[];
}

export type StatusTamper = (body: Record<string, unknown>, sessionId: string) => Record<string, unknown>;

export interface SecStack {
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

function listen(server: Server, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve((server.address() as AddressInfo).port));
  });
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
  const port = await listen(server, '127.0.0.1');
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
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

export async function startSecStack(options: { now?: () => number } = {}): Promise<SecStack> {
  const dir = mkdtempSync(join(tmpdir(), 'sec-stack-'));
  const recorder: Recorder = { exchanges: [], logs: [] };
  const server = createServer();
  const port = await listen(server, '127.0.0.1');
  const demoUrl = `http://localhost:${port}`;
  const returnUrl = `${demoUrl}/verify/return`;
  const clientId = 'demo-client';
  const clientSecret = `sec-${randomBytes(16).toString('hex')}`;
  const emulator = await startEmulator({
    port: 0,
    host: '127.0.0.1',
    clients: [{ clientId, secret: clientSecret, returnUrl, platform: 'web' }],
    control: true,
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
  });
  server.on('request', demo.app);
  const stack: SecStack = {
    demoUrl,
    returnUrl,
    emulatorUrl: emulator.url,
    serviceUrl: proxy.url,
    control: controlApi(emulator.url),
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
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await demo.close();
      await proxy.close();
      await emulator.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return stack;
}

export const DEMO_USERS = {
  alice: { id: 'usr_alice', phone: '+15550100001' },
  bob: { id: 'usr_bob', phone: '+15550100002' },
  chen: { id: 'usr_chen', phone: '+15550100003' },
} as const;
export type DemoUserKey = keyof typeof DEMO_USERS;

function unescapeHtml(value: string): string {
  return value
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&#x27;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&#96;/g, '`')
    .replace(/&amp;/g, '&');
}

export function parseHandoffPage(html: string): { verifyUrl: string; handoff: string } | undefined {
  const action = /<form id="verify-kit-handoff" method="post" action="([^"]*)">/.exec(html)?.[1];
  const hx = /<input type="hidden" name="hx" value="([^"]*)">/.exec(html)?.[1];
  return action === undefined || hx === undefined
    ? undefined
    : { verifyUrl: unescapeHtml(action), handoff: unescapeHtml(hx) };
}

/** One HTTP exchange on node:http (any header may be set, Host included); bounded by a timeout. */
export function rawRequest(
  url: URL,
  method: string,
  headers: Headers,
  body?: string,
  timeoutMs = 20_000,
): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const hostHeader = Object.keys(headers).some((h) => h.toLowerCase() === 'host');
    const req = httpRequest(
      {
        host: url.hostname === 'localhost' ? '127.0.0.1' : url.hostname,
        port: url.port,
        method,
        path: `${url.pathname}${url.search}`,
        headers: {
          ...(hostHeader ? {} : { host: url.host }),
          ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }),
          ...headers,
        },
        timeout: timeoutMs,
        agent: false,
      },
      (res) => {
        readAll(res).then(
          (buffer) => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: buffer.toString('utf8') }),
          reject,
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${url.href} did not answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

export interface Answer {
  status: number;
  headers: globalThis.Headers;
  body: string;
  location: string | null;
}

/**
 * A scripted browser over real HTTP: one cookie jar per site, no redirects followed, every
 * exchange recorded.
 */
export class Agent {
  /** cookie jar: origin -> name -> value */
  readonly jar = new Map<string, Map<string, string>>();
  kitCsrf = '';
  demoCsrf = '';

  constructor(
    readonly stack: SecStack,
    readonly label = 'agent',
  ) {}

  cookieFor(origin: string): string | undefined {
    const cookies = this.jar.get(origin);
    if (cookies === undefined || cookies.size === 0) return undefined;
    return [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async request(target: string, init: { method?: string; headers?: Headers; body?: string } = {}): Promise<Answer> {
    const url = new URL(target, this.stack.demoUrl);
    const headers: Headers = { ...init.headers };
    const cookie = this.cookieFor(url.origin);
    if (cookie !== undefined && headers.cookie === undefined) headers.cookie = cookie;
    // node:http rather than fetch: fetch would silently replace a forged Host header.
    const raw = await rawRequest(url, init.method ?? 'GET', headers, init.body);
    const responseHeaders = new globalThis.Headers();
    for (const [name, value] of Object.entries(raw.headers)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) responseHeaders.append(name, String(v));
    }
    for (const line of responseHeaders.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const cookies = this.jar.get(url.origin) ?? new Map<string, string>();
      const value = pair!.slice(eq + 1);
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') cookies.delete(pair!.slice(0, eq));
      else cookies.set(pair!.slice(0, eq), value);
      this.jar.set(url.origin, cookies);
    }
    this.stack.recorder.exchanges.push({
      who: 'ua',
      method: init.method ?? 'GET',
      url: url.href,
      requestHeaders: headers,
      requestBody: init.body ?? '',
      status: raw.status,
      responseHeaders: Object.fromEntries(responseHeaders),
      responseBody: raw.body,
    });
    return { status: raw.status, headers: responseHeaders, body: raw.body, location: responseHeaders.get('location') };
  }

  postForm(target: string, fields: Record<string, string> | string, headers: Headers = {}): Promise<Answer> {
    return this.request(target, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: typeof fields === 'string' ? fields : new URLSearchParams(fields).toString(),
    });
  }

  async signIn(user: DemoUserKey): Promise<this> {
    const page = await this.request('/signin');
    const token = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1];
    if (token === undefined) throw new Error(`no sign-in token: ${page.status}`);
    const answer = await this.postForm(
      '/signin',
      { _csrf: token, userId: DEMO_USERS[user].id },
      { origin: this.stack.demoUrl, 'sec-fetch-site': 'same-origin' },
    );
    if (answer.status !== 303 || answer.location !== '/')
      throw new Error(`sign-in failed: ${answer.status} ${answer.body.slice(0, 200)}`);
    await this.refreshTokens();
    return this;
  }

  /** Reads the kit's start token and the demo's own token from the home page. */
  async refreshTokens(): Promise<void> {
    const home = await this.request('/');
    if (home.status !== 200) throw new Error(`home answered ${home.status}`);
    const kit =
      /<form method="post" action="\/verify\/start">\s*<input type="hidden" name="_csrf" value="([^"]+)">/.exec(
        home.body,
      )?.[1];
    const demo = /<form[^>]*action="\/signout"[^>]*>\s*<input type="hidden" name="_csrf" value="([^"]+)">/.exec(
      home.body,
    )?.[1];
    if (kit === undefined) throw new Error('no kit token on the home page');
    this.kitCsrf = unescapeHtml(kit);
    this.demoCsrf = demo === undefined ? '' : unescapeHtml(demo);
  }

  /** POSTs the start form the way the demo's own page does (same origin). */
  postStart(fields: Record<string, string> | string, headers: Headers = {}): Promise<Answer> {
    return this.postForm('/verify/start', fields, {
      origin: this.stack.demoUrl,
      'sec-fetch-site': 'same-origin',
      ...headers,
    });
  }

  /** Starts an action; returns the handoff page's values and the stored attempt. */
  async start(action = 'confirm_phone', extra: Record<string, string> = {}) {
    const answer = await this.postStart({ _csrf: this.kitCsrf, action, ...extra });
    const parsed = parseHandoffPage(answer.body);
    if (answer.status !== 200 || parsed === undefined)
      throw new Error(`start failed: ${answer.status} ${answer.body.slice(0, 300)}`);
    const attempt = latestAttempt(this.stack);
    return { answer, ...parsed, sessionId: attempt.session_id, state: attempt.state };
  }

  /**
   * Completes the hosted page for real: redeems the handoff (form POST of `hx`), reads the code
   * from the emulator's SMS outbox, submits it; returns the service's 303 Location.
   */
  async verifyOnHostedPage(
    handoff: { verifyUrl: string; handoff: string; sessionId: string },
    code?: string,
  ): Promise<string> {
    const page = await this.postForm(handoff.verifyUrl, { hx: handoff.handoff });
    if (page.status !== 200) throw new Error(`hosted page answered ${page.status}`);
    const binding = /name="page_binding" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
    const sms = code ?? (await this.stack.control.codeFor(handoff.sessionId));
    const answer = await this.postForm(`${handoff.verifyUrl}/code`, { page_binding: binding, code: sms });
    if (answer.status !== 303 || answer.location === null) throw new Error(`code submit answered ${answer.status}`);
    return answer.location;
  }

  land(query: string, headers: Headers = {}): Promise<Answer> {
    return this.request(`/verify/return?${query}`, { headers });
  }

  landFor(sessionId: string, state: string, headers: Headers = {}): Promise<Answer> {
    return this.land(`session_id=${encodeURIComponent(sessionId)}&state=${encodeURIComponent(state)}`, headers);
  }
}

export interface AttemptRow {
  state: string;
  session_id: string;
  user_ref: string;
  action: string;
  outcome: string;
  failure_reason: string | null;
}

export function latestAttempt(stack: SecStack): AttemptRow {
  const row = stack.demo.db
    .prepare('SELECT * FROM verify_kit_attempts ORDER BY created_at DESC, rowid DESC LIMIT 1')
    .get() as AttemptRow | undefined;
  if (row === undefined) throw new Error('no attempt stored');
  return row;
}

export function attemptOf(stack: SecStack, sessionId: string): AttemptRow | undefined {
  return stack.demo.db.prepare('SELECT * FROM verify_kit_attempts WHERE session_id = ?').get(sessionId) as
    AttemptRow | undefined;
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
 * change (users, payout accounts, activity, attempts). Sessions are counted only: `rolling`
 * sessions refresh their expiry on every request.
 */
export function snapshot(stack: SecStack): Record<string, unknown> {
  const db = stack.demo.db;
  const tables = (
    db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]
  ).map((t) => t.name);
  const out: Record<string, unknown> = {};
  for (const name of tables) {
    out[`count:${name}`] = (db.prepare(`SELECT COUNT(*) AS n FROM "${name}"`).get() as { n: number }).n;
  }
  for (const name of ['demo_users', 'demo_payout_accounts', 'demo_activity', 'verify_kit_attempts']) {
    if (tables.includes(name)) out[name] = db.prepare(`SELECT * FROM "${name}" ORDER BY 1`).all();
  }
  return out;
}

/**
 * Forgets the start limits' counters (the kit's SQLite table), so suites that start many attempts
 * from one loopback IP test what they mean to and not the limits (test/security/limits.test.ts does).
 */
export function resetStartLimits(db: Database): void {
  const table = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'verify_kit_start_budgets'")
    .get();
  if (table !== undefined) db.exec('DELETE FROM verify_kit_start_budgets');
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

export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}
