/**
 * A browser for integration tests, over real HTTP: a cookie jar per host, no redirect followed
 * (each answer is a page to look at) but the 307 or 308 a submitted form's POST gets on its own
 * origin, which a browser sends the same body on to by itself; forms submitted as a browser
 * submits them when the user presses the first submit button (html-forms.ts), with `Origin` and
 * `Sec-Fetch-Site`. Host names under `.localhost` (the hosted page's `verify.localhost`) are
 * reached on loopback, as browsers do.
 */
import { randomUUID } from 'node:crypto';
import { SoftAuthenticator } from '../emulator/passkeys/soft-authenticator.ts';
import { formsIn, type FormEntry, type HtmlForm } from './html-forms.ts';
import { loopbackFetch } from './loopback-fetch.ts';
import { pageExcerpt } from './html.ts';
import { namedUrl } from './named-url.ts';

/** One answer, read once: its body is `html`. */
export interface TestPage {
  /** The URL that was requested. */
  url: string;
  status: number;
  headers: Headers;
  html: string;
  /** The absolute redirect target of a 3xx answer. */
  location: string | undefined;
}

export interface SubmitOptions {
  /** Which form: the one whose action resolves to this URL (or ends with this path). Default: the first. */
  action?: string;
  /**
   * Which form: the one whose submitted fields include each of these (a name submitted several
   * times matches any of its values). The kit's start forms all post to one URL, so
   * `{ action: 'change_phone' }` tells one action's form from another's.
   */
  having?: Record<string, string>;
}

export interface TestBrowser {
  /** GET as a browser follows a link (a navigation, asking for HTML), with this browser's cookies. */
  get(url: string): Promise<TestPage>;
  /**
   * Submits a form of `page` as a browser does when the user presses its first submit button: every
   * entry its controls submit, in document order (a name given several times, several times), each
   * name of `fields` replacing every entry of that name or added at the end; to that button's
   * `formaction`, with its `formmethod` and `formenctype` when it has them. A `post` body is
   * URL-encoded, `multipart/form-data` or `text/plain` as the form's `enctype` says; a `get` form is
   * a navigation to its action with the entries as the query. A `post` answered with a 307 or 308
   * on its action's origin is sent on with the same body, as a browser does. A `method=dialog` form
   * is refused: a browser only closes its dialog.
   */
  submitForm(page: TestPage, fields?: Record<string, string>, options?: SubmitOptions): Promise<TestPage>;
  /** POSTs a urlencoded body as a form on `from` (an origin or page URL) would. */
  post(url: string, fields: Record<string, string>, from: string): Promise<TestPage>;
  /** The passkey this browser saved for a relying party (a host name), created on first use. */
  authenticator(rpId: string): SoftAuthenticator;
  /** Whether this browser saved a passkey for `rpId`. */
  hasPasskey(rpId: string): boolean;
}

/** A form of a page as a browser submits it on its first submit button (html-forms.ts); formsOf resolves its action. */
export type ParsedForm = HtmlForm;

/** The page's forms, with their actions resolved against the page URL and their submitted entries. */
export function formsOf(page: TestPage): ParsedForm[] {
  return formsIn(page.html).map((form) => ({ ...form, action: new URL(form.action, page.url).href }));
}

/** The entries with each name of `given` set as URLSearchParams.set does: its first entry takes the value, the others go. */
function withGiven(entries: FormEntry[], given: Record<string, string>): FormEntry[] {
  const result: FormEntry[] = [];
  const placed = new Set<string>();
  for (const entry of entries) {
    const [name] = entry;
    if (!Object.hasOwn(given, name)) result.push(entry);
    else if (!placed.has(name)) {
      placed.add(name);
      result.push([name, given[name] as string]);
    }
  }
  for (const [name, value] of Object.entries(given)) if (!placed.has(name)) result.push([name, value]);
  return result;
}

/** Name and value as text: a file with no file chosen is sent as its file name, empty. */
const asText = (entries: FormEntry[]) => entries.map(([name, value]): [string, string] => [name, value]);

/** A name in a multipart header, escaped as browsers escape it. */
const quoted = (name: string) => `"${name.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A')}"`;

/**
 * A multipart/form-data body as a browser writes it: a file input with no file chosen is a part with
 * an empty file name (Node's FormData leaves that `filename` out, so a parser would read a text field).
 */
function multipart(entries: FormEntry[]): { type: string; body: string } {
  const boundary = `----FormBoundary${randomUUID().replace(/-/g, '')}`;
  const parts = entries.map(([name, value, kind]) =>
    kind === 'file'
      ? `Content-Disposition: form-data; name=${quoted(name)}; filename=""\r\nContent-Type: application/octet-stream\r\n\r\n`
      : `Content-Disposition: form-data; name=${quoted(name)}\r\n\r\n${value}`,
  );
  return {
    type: `multipart/form-data; boundary=${boundary}`,
    body: `${parts.map((part) => `--${boundary}\r\n${part}\r\n`).join('')}--${boundary}--\r\n`,
  };
}

/** A `post` body as the form's enctype encodes it. */
function encodedBody(entries: FormEntry[], enctype: string): { type: string; body: string } {
  if (enctype === 'multipart/form-data') return multipart(entries);
  if (enctype === 'text/plain') {
    return {
      type: 'text/plain',
      body: asText(entries)
        .map(([name, value]) => `${name}=${value}\r\n`)
        .join(''),
    };
  }
  return { type: 'application/x-www-form-urlencoded', body: new URLSearchParams(asText(entries)).toString() };
}

function fetchSite(from: URL, to: URL): string {
  if (from.origin === to.origin) return 'same-origin';
  const site = (url: URL) => `${url.protocol}${url.hostname.split('.').slice(-2).join('.')}`;
  return site(from) === site(to) ? 'same-site' : 'cross-site';
}

// What a browser's navigation asks for: fetch's own default, */*, says a script's request.
const NAVIGATION_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

type CookieJars = Map<string, Map<string, string>>;

/** Keeps what a response's Set-Cookie lines set (or clear) in the jar of its host. */
function storeCookies(jars: CookieJars, host: string, response: Response): void {
  for (const line of response.headers.getSetCookie()) {
    const pair = line.split(';')[0] ?? '';
    const name = pair.split('=')[0] ?? '';
    if (!jars.has(host)) jars.set(host, new Map());
    if (/max-age=0|expires=thu, 01 jan 1970/i.test(line)) jars.get(host)?.delete(name);
    else jars.get(host)?.set(name, pair);
  }
}

/** One request as a browser makes it: the host's cookies sent, its Set-Cookie kept, no redirect followed. */
type BrowserRequestInit = { method: string; headers?: Record<string, string>; body?: string };

async function browserRequest(jars: CookieJars, url: string, init: BrowserRequestInit) {
  const target = new URL(url);
  const headers = new Headers(init.headers);
  const jar = jars.get(target.host);
  if (jar !== undefined && jar.size > 0) headers.set('cookie', [...jar.values()].join('; '));
  const response = await loopbackFetch(target, { ...init, headers });
  storeCookies(jars, target.host, response);
  const location = response.headers.get('location');
  return {
    url,
    status: response.status,
    headers: response.headers,
    html: await response.text(),
    location: location === null ? undefined : new URL(location, url).href,
  };
}

/** The most 307s or 308s one form's POST is sent on through (browsers stop at about 20; a loop fails sooner). */
const MOST_RESENDS = 5;

type EncodedBody = { type: string; body: string };

/**
 * A form's POST and, where the answer is a 307 or 308 on the action's own origin (the kit's step-up
 * page sends its confirmation on so), the same body sent on as a browser sends it: the test only
 * ever holds the answer, never the body.
 */
async function postFollowingResends(
  postEncoded: (url: string, from: string, body: EncodedBody) => Promise<TestPage>,
  url: string,
  from: string,
  body: EncodedBody,
): Promise<TestPage> {
  let answer = await postEncoded(url, from, body);
  for (let hop = 0; hop < MOST_RESENDS && (answer.status === 307 || answer.status === 308); hop++) {
    if (answer.location === undefined || new URL(answer.location).origin !== new URL(url).origin) break;
    answer = await postEncoded(answer.location, from, body);
  }
  return answer;
}

export function createTestBrowser(): TestBrowser {
  const jars: CookieJars = new Map();
  const passkeys = new Map<string, SoftAuthenticator>();
  const request = (url: string, init: BrowserRequestInit) => browserRequest(jars, url, init);

  /** A form's POST, as a browser navigates with it. */
  const postEncoded = (url: string, from: string, { type, body }: EncodedBody) =>
    request(url, {
      method: 'POST',
      headers: {
        'content-type': type,
        accept: NAVIGATION_ACCEPT,
        origin: new URL(from).origin,
        'sec-fetch-site': fetchSite(new URL(from), new URL(url)),
        'sec-fetch-mode': 'navigate',
      },
      body,
    });

  const post = (url: string, fields: Record<string, string>, from: string) =>
    postEncoded(url, from, encodedBody(Object.entries(fields), 'application/x-www-form-urlencoded'));

  const get = (url: string) => request(url, { method: 'GET', headers: { accept: NAVIGATION_ACCEPT } });

  return {
    get,
    post,
    async submitForm(page, fields = {}, options = {}) {
      const { action: wanted, having = {} } = options;
      const postsTo = (f: ParsedForm) =>
        wanted === undefined || f.action === new URL(wanted, page.url).href || f.action.endsWith(wanted);
      const has = (f: ParsedForm) =>
        Object.entries(having).every(([name, value]) => f.entries.some(([n, v]) => n === name && v === value));
      const form = formsOf(page).find((f) => postsTo(f) && has(f));
      if (form === undefined) {
        // Names only: a field's value may be a token.
        const which = [
          wanted === undefined ? 'form' : `form posting to ${wanted}`,
          ...Object.keys(having).map((name) => `with the ${name} asked for`),
        ].join(' ');
        throw new Error(`No ${which} on ${namedUrl(page.url)} (status ${page.status}): ${pageExcerpt(page.html, 300)}`);
      }
      if (form.method === 'dialog') {
        throw new Error(
          `The form on ${namedUrl(page.url)} has method=dialog: a browser closes its dialog and sends nothing, so there is nothing to submit.`,
        );
      }
      const submitted = withGiven(form.entries, fields);
      if (form.method === 'post')
        return postFollowingResends(postEncoded, form.action, page.url, encodedBody(submitted, form.enctype));
      // A GET form replaces its action's query with its entries.
      const target = new URL(form.action);
      target.search = new URLSearchParams(asText(submitted)).toString();
      return get(target.href);
    },
    authenticator(rpId) {
      const existing = passkeys.get(rpId);
      if (existing !== undefined) return existing;
      const created = new SoftAuthenticator();
      passkeys.set(rpId, created);
      return created;
    },
    hasPasskey: (rpId) => passkeys.has(rpId),
  };
}
