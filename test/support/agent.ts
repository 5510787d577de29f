/**
 * The one scripted, browser-less user agent of the suites: real HTTP on node:http (so any header,
 * Host included, goes out as written), one cookie jar per origin, redirects never followed, every
 * request bounded in time, and every exchange handed to a recorder (the leak checks search them).
 *
 * What differs between the apps under test is the `Site`: where it is, the Origin its forms come
 * from, how a user signs in (and so where the kit's start token comes from), how the newest
 * attempt is read, and which emulator texts the codes.
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { ControlApi } from './emulator.ts';

export type Headers = Record<string, string>;

export interface Exchange {
  /** 'ua': a scripted agent; 'backend': the app's client to the service; 'browser': Chromium. */
  who: 'ua' | 'backend' | 'browser';
  method: string;
  url: string;
  requestHeaders: Headers;
  requestBody: string;
  status: number;
  responseHeaders: Headers;
  responseBody: string;
}

/** An answer, read whole: the body as text, and `text()` / `json()` as on a fetch Response. */
export interface Answer {
  status: number;
  headers: globalThis.Headers;
  body: string;
  location: string | null;
  /** How long the exchange took. */
  ms: number;
  text(): Promise<string>;
  json<T = unknown>(): Promise<T>;
}

/** The newest attempt's ids, as the site's store has them. */
export interface StartedIds {
  sessionId: string;
  state: string;
}

export interface Site {
  /** Where the agent browses: relative paths resolve against it. */
  url: string;
  /** The Origin the site's own forms send (its public address when instances share one); default `url`. */
  origin?: string;
  /** Signs `user` in; returns the kit's start token and the site's own form token, if it has one. */
  signIn(agent: Agent, user: string): Promise<{ csrf: string; siteCsrf?: string }>;
  /** The attempt a start just stored (to land on it, complete it or inspect it). */
  latestAttempt?(): Promise<StartedIds>;
  /** The emulator whose outbox holds the texted codes. */
  control?: ControlApi;
}

export interface AgentOptions {
  /** Receives every exchange, in order. */
  record?: (exchange: Exchange) => void;
  /** Each request's bound; default 20 s. */
  timeoutMs?: number;
}

export interface Started extends StartedIds {
  response: Answer;
  html: string;
  verifyUrl: string;
  handoff: string;
}

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

/** The kit's auto-submit handoff page: where it posts and the handoff it carries (undefined if not that page). */
export function parseHandoffPage(html: string): { verifyUrl: string; handoff: string } | undefined {
  const action = /<form id="verify-kit-handoff" method="post" action="([^"]*)">/.exec(html)?.[1];
  const hx = /<input type="hidden" name="hx" value="([^"]*)">/.exec(html)?.[1];
  return action === undefined || hx === undefined
    ? undefined
    : { verifyUrl: unescapeHtml(action), handoff: unescapeHtml(hx) };
}

/** The value of a hidden `_csrf` field that follows `after` in a page (a form's opening, say). */
export function formToken(html: string, after: RegExp = /<form[^>]*>\s*/): string | undefined {
  const found = new RegExp(`${after.source}<input type="hidden" name="_csrf" value="([^"]+)">`).exec(html)?.[1];
  return found === undefined ? undefined : unescapeHtml(found);
}

function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
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
        // As browsers resolve them: localhost and every *.localhost name (the emulator's page host).
        host: url.hostname === 'localhost' || url.hostname.endsWith('.localhost') ? '127.0.0.1' : url.hostname,
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

export class Agent {
  /** cookie jar: origin -> name -> value */
  readonly jar = new Map<string, Map<string, string>>();
  /** The kit's start token (after signIn). */
  csrf = '';
  /** The site's own form token (the demo's), after signIn. */
  siteCsrf = '';

  constructor(
    readonly site: Site,
    readonly options: AgentOptions = {},
  ) {}

  get origin(): string {
    return this.site.origin ?? this.site.url;
  }

  cookieFor(origin: string): string | undefined {
    const cookies = this.jar.get(origin);
    if (cookies === undefined || cookies.size === 0) return undefined;
    return [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async request(
    target: string,
    init: { method?: string; headers?: Headers; body?: string; timeoutMs?: number } = {},
  ): Promise<Answer> {
    const started = Date.now();
    const url = new URL(target, this.site.url);
    const method = init.method ?? 'GET';
    const headers: Headers = { ...init.headers };
    const cookie = this.cookieFor(url.origin);
    if (cookie !== undefined && headers.cookie === undefined) headers.cookie = cookie;
    const raw = await rawRequest(url, method, headers, init.body, init.timeoutMs ?? this.options.timeoutMs);
    const responseHeaders = new globalThis.Headers();
    for (const [name, value] of Object.entries(raw.headers)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) responseHeaders.append(name, String(v));
    }
    this.keepCookies(url.origin, responseHeaders.getSetCookie());
    this.options.record?.({
      who: 'ua',
      method,
      url: url.href,
      requestHeaders: headers,
      requestBody: init.body ?? '',
      status: raw.status,
      responseHeaders: Object.fromEntries(responseHeaders),
      responseBody: raw.body,
    });
    const body = raw.body;
    return {
      status: raw.status,
      headers: responseHeaders,
      body,
      location: responseHeaders.get('location'),
      ms: Date.now() - started,
      text: async () => body,
      json: async <T>() => JSON.parse(body) as T,
    };
  }

  private keepCookies(origin: string, lines: string[]): void {
    for (const line of lines) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const cookies = this.jar.get(origin) ?? new Map<string, string>();
      const value = pair!.slice(eq + 1);
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') cookies.delete(pair!.slice(0, eq));
      else cookies.set(pair!.slice(0, eq), value);
      this.jar.set(origin, cookies);
    }
  }

  postForm(
    target: string,
    fields: Record<string, string> | string,
    headers: Headers = {},
    timeoutMs?: number,
  ): Promise<Answer> {
    return this.request(target, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: typeof fields === 'string' ? fields : new URLSearchParams(fields).toString(),
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
    });
  }

  async signIn(user: string): Promise<this> {
    const tokens = await this.site.signIn(this, user);
    this.csrf = tokens.csrf;
    this.siteCsrf = tokens.siteCsrf ?? '';
    return this;
  }

  /** POSTs the start form the way the site's own page does (same origin). */
  postStart(fields: Record<string, string> | string, headers: Headers = {}, timeoutMs?: number): Promise<Answer> {
    return this.postForm(
      '/verify/start',
      fields,
      { origin: this.origin, 'sec-fetch-site': 'same-origin', ...headers },
      timeoutMs,
    );
  }

  /** POSTs the start form for `action` with the signed-in user's token; the answer, whatever it is. */
  tryStart(action: string, extra: Record<string, string> = {}, timeoutMs?: number): Promise<Answer> {
    return this.postStart({ _csrf: this.csrf, action, ...extra }, {}, timeoutMs);
  }

  /** Starts `action` and returns the handoff page's values and the stored ids; fails loudly unless it is one. */
  async start(action: string, extra: Record<string, string> = {}): Promise<Started> {
    if (this.site.latestAttempt === undefined)
      throw new Error('this site cannot read its newest attempt: use tryStart');
    const response = await this.tryStart(action, extra);
    const parsed = parseHandoffPage(response.body);
    if (response.status !== 200 || parsed === undefined)
      throw new Error(`start failed: ${response.status} ${response.body.slice(0, 400)}`);
    const { sessionId, state } = await this.site.latestAttempt();
    return { response, html: response.body, ...parsed, sessionId, state };
  }

  /**
   * Completes the hosted page for real: redeems the handoff (form POST of `hx`), reads the code
   * from the emulator's SMS outbox (unless given), submits it; returns the service's 303 Location.
   */
  async verifyOnHostedPage(handoff: { verifyUrl: string; handoff: string; sessionId: string }, code?: string) {
    const page = await this.postForm(handoff.verifyUrl, { hx: handoff.handoff });
    if (page.status !== 200) throw new Error(`hosted page answered ${page.status}`);
    const binding = /name="page_binding" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
    if (code === undefined && this.site.control === undefined)
      throw new Error('the site names no emulator to read codes from');
    const sms = code ?? (await this.site.control!.codeFor(handoff.sessionId));
    const answer = await this.postForm(`${handoff.verifyUrl}/code`, { page_binding: binding, code: sms });
    if (answer.status !== 303 || answer.location === null) throw new Error(`code submit answered ${answer.status}`);
    return answer.location;
  }

  /** Starts an action that texts a typed number (`destination: 'entered'`): `phone` as the user typed it. */
  startWithNumber(action: string, phone: string, extra: Record<string, string> = {}): Promise<Started> {
    return this.start(action, { ...extra, phone });
  }

  /** The same start, whatever the answer (a 422 number form, a 429...). */
  tryStartWithNumber(action: string, phone: string, extra: Record<string, string> = {}): Promise<Answer> {
    return this.tryStart(action, { ...extra, phone });
  }

  /** GET the landing with exactly this query string. */
  land(query: string, headers: Headers = {}, timeoutMs?: number): Promise<Answer> {
    return this.request(`/verify/return?${query}`, { headers, ...(timeoutMs === undefined ? {} : { timeoutMs }) });
  }

  landFor(sessionId: string, state: string, headers: Headers = {}, timeoutMs?: number): Promise<Answer> {
    return this.land(
      `session_id=${encodeURIComponent(sessionId)}&state=${encodeURIComponent(state)}`,
      headers,
      timeoutMs,
    );
  }
}

/** A test app (test/support/app.ts, also in the crash fixture process) at `url`, its forms sent from `origin`. */
export function testAppSite(url: string, origin?: string): Site {
  return { url, ...(origin === undefined ? {} : { origin }), signIn: signInByName };
}

/** Sign-in on the test apps: POST /test/login names the user, the answer carries the kit's token. */
export async function signInByName(agent: Agent, user: string): Promise<{ csrf: string }> {
  const answer = await agent.postForm('/test/login', { user });
  if (answer.status !== 200) throw new Error(`sign-in as ${user} answered ${answer.status}`);
  return { csrf: (await answer.json<{ csrf: string }>()).csrf };
}
