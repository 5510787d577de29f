/**
 * The audit's browser-less user agent: real HTTP (node:http or node:https), a cookie jar kept as a
 * browser keeps one, redirects never followed unless asked, every request bounded in time, and
 * every exchange kept by the run's recorder (the leak and header checks read them afterwards).
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { formsIn } from '../html-forms.ts';
import { decodeHtml, inputValue } from '../html.ts';
import { namedUrl } from '../named-url.ts';
import { readBody } from './answer-body.ts';
import { CookieJar } from './cookie-jar.ts';

export type Headers = Record<string, string>;

/** One request and its answer, as the agent sent and read them. */
export interface Exchange {
  method: string;
  url: string;
  requestHeaders: Headers;
  requestBody: string;
  status: number;
  responseHeaders: Headers;
  /** Set-Cookie lines, one per cookie (also joined into responseHeaders['set-cookie']). */
  setCookies: string[];
  responseBody: string;
}

export interface Answer {
  status: number;
  headers: Headers;
  setCookies: string[];
  body: string;
  location: string | null;
  url: string;
}

const HANDOFF_FORM = /<form id="verify-kit-handoff" method="post" action="([^"]*)">/;
const HANDOFF_INPUT = /<input type="hidden" name="hx" value="([^"]*)">/;

/** The kit's auto-submit handoff page: where it posts and the handoff it carries (undefined if not that page). */
export function parseHandoffPage(html: string): { verifyUrl: string; handoff: string } | undefined {
  const action = HANDOFF_FORM.exec(html)?.[1];
  const hx = HANDOFF_INPUT.exec(html)?.[1];
  return action === undefined || hx === undefined
    ? undefined
    : { verifyUrl: decodeHtml(action), handoff: decodeHtml(hx) };
}

/**
 * The page with the value of the auto-submit form's own `hx` input left out: the one place a
 * handoff may be written in it (a copy in a link, a meta tag or another form stays).
 */
export function withoutHandoffInput(html: string): string {
  const form = HANDOFF_FORM.exec(html);
  if (form === null) return html;
  const start = form.index + form[0].length;
  const end = html.indexOf('</form>', start);
  const inner = html.slice(start, end === -1 ? undefined : end);
  const input = HANDOFF_INPUT.exec(inner);
  if (input === null) return html;
  const at = start + input.index;
  return `${html.slice(0, at)}${input[0].replace(/value="[^"]*"/, 'value=""')}${html.slice(at + input[0].length)}`;
}

/** Origin and path of `target` read against `base`, as a browser resolves a form's action; undefined when it is no URL. */
function pathOf(target: string, base: string): string | undefined {
  try {
    const url = new URL(target, base);
    return `${url.origin}${url.pathname}`;
  } catch {
    return undefined;
  }
}

/**
 * A field's value in a page, read as a browser reads it (any quoting, order or case): the first
 * input named `field`, or what the first form posting to `formAction` submits under that name (an
 * input outside it joined with `form=` included). A form's action is resolved against `pageUrl`,
 * as the browser posts it: `/verify/start`, `verify/start` and `https://app.example/verify/start`
 * on that origin are one action.
 */
export function hiddenField(
  html: string,
  field: string,
  formAction?: { path: string; pageUrl: string },
): string | undefined {
  if (formAction === undefined) return inputValue(html, field);
  const wanted = pathOf(formAction.path, formAction.pageUrl);
  return formsIn(html)
    .find((form) => wanted !== undefined && pathOf(form.action, formAction.pageUrl) === wanted)
    ?.entries.find(([name]) => name === field)?.[1];
}

/**
 * A request that never reached its host (the name did not resolve, nothing listened, no route):
 * the check that sent it could not run, which says nothing about the app's defences.
 */
export class UnreachableError extends Error {
  override readonly name = 'UnreachableError';
  /** The origin that could not be reached. */
  readonly origin: string;
  constructor(
    url: URL,
    readonly code: string,
  ) {
    super(`could not reach ${namedUrl(url)} (${code})`);
    this.origin = url.origin;
  }
}

/** Errors of a connection that was never made; anything later (a reset, a hang-up) is the app's answer. */
const UNREACHABLE = new Set(['ENOTFOUND', 'EAI_AGAIN', 'ECONNREFUSED', 'EADDRNOTAVAIL', 'ENETUNREACH', 'EHOSTUNREACH']);

function unreachable(url: URL, error: Error): Error {
  const code = (error as NodeJS.ErrnoException).code;
  return code !== undefined && UNREACHABLE.has(code) ? new UnreachableError(url, code) : error;
}

/** Browsers resolve `localhost` and every `*.localhost` name to loopback themselves (the emulator's `verify.localhost`); Node's resolver may not. */
export function connectHost(hostname: string): string {
  if (hostname === 'localhost' || hostname.endsWith('.localhost')) return '127.0.0.1';
  return hostname.replace(/^\[|\]$/g, '');
}

function flat(headers: IncomingHttpHeaders): Headers {
  const out: Headers = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join('\n') : String(value);
  }
  return out;
}

function exchange(
  url: URL,
  method: string,
  headers: Headers,
  body: string | undefined,
  timeoutMs: number,
  localAddress: string | undefined,
): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const fail = (error: Error) => {
      clearTimeout(deadline);
      reject(error);
    };
    // Rejects with `why` before the request's own 'error' (a reset, a hang-up) can say less.
    const stop = (why: string) => {
      fail(new Error(`${method} ${namedUrl(url)} ${why}`));
      req.destroy();
    };
    const req = send(
      {
        host: connectHost(url.hostname),
        port: url.port,
        method,
        path: `${url.pathname}${url.search}`,
        headers: {
          host: url.host,
          ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }),
          ...headers,
        },
        timeout: timeoutMs,
        agent: false,
        ...(localAddress === undefined ? {} : { localAddress }),
      },
      (res) => {
        readBody(res, stop, (text) => {
          clearTimeout(deadline);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text });
        });
        res.on('error', fail);
      },
    );
    // `timeout` above only times the socket's silences: an answer that trickles a byte now and then
    // never trips it. This bounds the whole exchange.
    const deadline = setTimeout(
      () =>
        stop(
          `did not finish answering within ${timeoutMs} ms (the audit's \`timeoutMs\`; raise it if your app is this slow)`,
        ),
      timeoutMs,
    );
    req.on('timeout', () => stop(`did not answer within ${timeoutMs} ms`));
    req.on('error', (error) => fail(unreachable(url, error)));
    req.end(body);
  });
}

export class AuditAgent {
  readonly jar = new CookieJar();
  /** This agent's own exchanges (the run's recorder has everyone's). */
  readonly exchanges: Exchange[] = [];

  constructor(
    /** Relative paths resolve against it. */
    readonly baseUrl: string,
    private readonly record: (exchange: Exchange) => void,
    private readonly timeoutMs = 20_000,
    /** Sent with every request (a proxy's headers, say) unless the request sets its own. */
    readonly defaultHeaders: Headers = {},
    /** The loopback address this agent connects from (its own client IP to the app), if any. */
    readonly localAddress?: string,
  ) {}

  /** One request; cookies from the jar unless a `cookie` header is given. */
  async request(target: string, init: { method?: string; headers?: Headers; body?: string } = {}): Promise<Answer> {
    const url = new URL(target, this.baseUrl);
    const method = init.method ?? 'GET';
    const headers: Headers = { ...this.defaultHeaders, ...init.headers };
    const cookie = this.jar.headerFor(url);
    if (cookie !== undefined && headers.cookie === undefined) headers.cookie = cookie;
    const from = url.origin === new URL(this.baseUrl).origin ? this.localAddress : undefined;
    const raw = await exchange(url, method, headers, init.body, this.timeoutMs, from);
    const setCookie = raw.headers['set-cookie'] ?? [];
    this.jar.keep(url, setCookie);
    const responseHeaders = flat(raw.headers);
    this.remember({
      method,
      url: url.href,
      requestHeaders: headers,
      requestBody: init.body ?? '',
      status: raw.status,
      responseHeaders,
      setCookies: setCookie,
      responseBody: raw.body,
    });
    const location = responseHeaders.location ?? null;
    return {
      status: raw.status,
      headers: responseHeaders,
      setCookies: setCookie,
      body: raw.body,
      location,
      url: url.href,
    };
  }

  /** A form POST (urlencoded). */
  postForm(target: string, fields: Record<string, string>, headers: Headers = {}): Promise<Answer> {
    return this.request(target, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(fields).toString(),
    });
  }

  private remember(exchange: Exchange): void {
    this.exchanges.push(exchange);
    this.record(exchange);
  }
}
