/**
 * A scripted user agent over real HTTP: keeps the app's session cookie, never follows redirects,
 * and records every URL it requests and every Location it is sent to (for the leak checks).
 */
import { openHostedPage, submitCode, type TestEmulator } from './emulator.ts';
import type { KitTestApp } from './kit-app.ts';

export interface Seen {
  urls: string[];
  handoffs: string[];
  bodies: string[];
}

export function newSeen(): Seen {
  return { urls: [], handoffs: [], bodies: [] };
}

export interface Handoff {
  response: Response;
  html: string;
  verifyUrl: string;
  handoff: string;
}

function unescapeHtml(value: string): string {
  return value
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
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

export class TestUser {
  cookie: string | undefined;
  csrf = '';

  constructor(
    readonly app: KitTestApp,
    readonly seen: Seen,
  ) {}

  async request(path: string, init: RequestInit = {}): Promise<Response> {
    const target = path.startsWith('http') ? path : `${this.app.url}${path}`;
    this.seen.urls.push(target);
    const headers = new Headers(init.headers);
    if (this.cookie !== undefined) headers.set('cookie', this.cookie);
    const response = await fetch(target, { ...init, headers, redirect: 'manual' });
    const setCookie = response.headers.getSetCookie().find((c) => c.startsWith('kit_test_sid='));
    if (setCookie !== undefined) this.cookie = setCookie.split(';')[0];
    const location = response.headers.get('location');
    if (location !== null) this.seen.urls.push(location);
    return response;
  }

  async signIn(name: string): Promise<this> {
    const response = await this.request('/test/login', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ user: name }).toString(),
    });
    if (response.status !== 200) throw new Error(`sign in failed: ${response.status}`);
    this.csrf = ((await response.json()) as { csrf: string }).csrf;
    return this;
  }

  /** POSTs the start form (as the integrator's page would, same origin). */
  postStart(fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
    return this.request('/verify/start', {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: this.app.url,
        'sec-fetch-site': 'same-origin',
        ...headers,
      },
      body: new URLSearchParams(fields).toString(),
    });
  }

  /** Starts `action` and returns the parsed auto-submit page; fails loudly unless it is one. */
  async start(action = 'grant_badge', extra: Record<string, string> = {}): Promise<Handoff> {
    const response = await this.postStart({ _csrf: this.csrf, action, ...extra });
    const html = await response.text();
    this.seen.bodies.push(html);
    const parsed = parseHandoffPage(html);
    if (response.status !== 200 || parsed === undefined)
      throw new Error(`start failed: ${response.status} ${html.slice(0, 400)}`);
    this.seen.handoffs.push(parsed.handoff);
    return { response, html, ...parsed };
  }

  /** GET the landing with exactly these query parameters (raw query string). */
  land(query: string): Promise<Response> {
    return this.request(`/verify/return?${query}`);
  }

  landFor(sessionId: string, state: string): Promise<Response> {
    return this.land(`session_id=${encodeURIComponent(sessionId)}&state=${encodeURIComponent(state)}`);
  }
}

/**
 * Goes through the hosted page for real: redeems the handoff, reads the SMS code from the
 * emulator's outbox, submits it, and returns the service's redirect to the return URL.
 */
export async function completeOnHostedPage(
  emulator: TestEmulator,
  handoff: Handoff,
  sessionId: string,
  seen: Seen,
): Promise<string> {
  seen.urls.push(handoff.verifyUrl);
  const page = await openHostedPage(handoff.verifyUrl, handoff.handoff);
  if (page.response.status !== 200) throw new Error(`hosted page answered ${page.response.status}`);
  const code = await emulator.control.codeFor(sessionId);
  const answer = await submitCode(handoff.verifyUrl, page, code);
  const location = answer.headers.get('location');
  if (answer.status !== 303 || location === null) throw new Error(`code submit answered ${answer.status}`);
  seen.urls.push(location);
  return location;
}

/** Asserts neither the secret (raw or inside Basic credentials) nor any handoff appears in `haystacks`. */
export function leaks(app: KitTestApp, seen: Seen, extra: string[] = []): string[] {
  const secrets = [app.secret, Buffer.from(`${app.clientId}:${app.secret}`).toString('base64'), ...seen.handoffs];
  const haystacks: [string, string[]][] = [
    ['app request URLs', app.requestUrls],
    ['URLs and Locations seen by the user agent', seen.urls],
    ['kit log lines', app.logs],
    ['errors reaching the error handler', app.errors],
    ['emulator log lines', app.emulator.logLines],
    ['extra', extra],
  ];
  const found: string[] = [];
  for (const [where, lines] of haystacks) {
    for (const text of lines) {
      for (const secret of secrets)
        if (secret.length > 0 && text.includes(secret)) found.push(`${where}: ${text.slice(0, 120)}`);
    }
  }
  return found;
}
