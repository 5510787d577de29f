/**
 * The files a browser loads with the app's pages (their scripts, stylesheets, preloads and
 * manifest, a script's source map, the modules and URLs its scripts import, fetch or request with
 * XMLHttpRequest, the pages of
 * its frames and theirs): a client secret bundled into one is sent to every visitor as surely as
 * one written in the page, so the leak checks search them too.
 */
import { attribute, TAG_REST } from '../html.ts';
import { UnreachableError, type AuditAgent, type Exchange } from './agent.ts';
import { describeThrown } from './hooks.ts';

/**
 * What the file search reads of a run: its exchanges (a body past the run's bound with the files
 * its page loads, listed as it was read), and the app's origin and deadline.
 */
interface RecordedRun {
  readonly exchanges: readonly (Exchange & { unkeptBody?: { files: readonly string[] } })[];
  readonly options: { readonly appOrigin: string; readonly timeoutMs: number };
}

/** A comment (skipped), or a tag: group 1 its name, group 2 its attribute text. */
const TOKEN = new RegExp(`<!--[\\s\\S]*?(?:-->|$)|<([A-Za-z][^\\s/>]*)${TAG_REST}`, 'g');

/** The `rel` values of a `<link>` whose file the browser loads with the page (or may). */
const LOADED_LINKS = new Set(['stylesheet', 'preload', 'modulepreload', 'prefetch', 'manifest']);

/** The elements whose page or file a browser loads inside the page, by the attribute naming it. */
const FRAMES: Readonly<Record<string, string>> = { iframe: 'src', frame: 'src', object: 'data', embed: 'src' };

/** The most files fetched in one run: an app's own, not a crawl. */
const MOST_FILES = 40;

/** A script's `//# sourceMappingURL=` (or `/*# ... *\/` in a stylesheet), if it names one. */
const SOURCE_MAP = /[#@]\s*sourceMappingURL\s*=\s*([^\s*'"]+)/;

/**
 * A module's `import ... from '...'`, `export ... from '...'`, `import '...'` and `import('...')`
 * with a literal specifier (group 2): the browser loads each with the script.
 */
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*)(["'])([^"'\n]{1,500})\1/g;

/** Where a script element's text ends. */
const SCRIPT_END = /<\/script/gi;

/**
 * The text of each inline script of a page, in one pass: each script's end is searched from its
 * start, and one never closed holds the rest of the page (a page of thousands of unclosed tags
 * never costs a search per tag to the end).
 */
export function inlineScriptsOf(html: string): string[] {
  const scripts: string[] = [];
  const tokens = new RegExp(TOKEN.source, 'g');
  for (let token = tokens.exec(html); token !== null; token = tokens.exec(html)) {
    if (token[1]?.toLowerCase() !== 'script') continue;
    const start = token.index + token[0].length;
    SCRIPT_END.lastIndex = start;
    const end = SCRIPT_END.exec(html)?.index;
    scripts.push(html.slice(start, end));
    if (end === undefined) break;
    tokens.lastIndex = end;
  }
  return scripts;
}

/**
 * A script's request of a literal URL (group 2): `fetch('/api/config')` (a runtime configuration),
 * `new Worker('...')`, `importScripts('...')`.
 */
const FETCH = /\b(?:fetch|Worker|importScripts)\s*\(\s*(["'`])([^"'`\n$]{1,500})\1/g;

/**
 * An XMLHttpRequest's `xhr.open('GET', '/api/settings')` with a literal method and URL (group 2):
 * what axios and jQuery send underneath, a runtime configuration loaded as surely as by fetch.
 */
const XHR_OPEN = /\.open\s*\(\s*["'`][A-Za-z]{1,10}["'`]\s*,\s*(["'`])([^"'`\n$]{1,500})\1/g;

/** The URLs a script imports, fetches or opens (a path or a full URL; a bare `react` is the bundler's). */
function importsOf(script: string): string[] {
  return [...script.matchAll(IMPORT), ...script.matchAll(FETCH), ...script.matchAll(XHR_OPEN)]
    .map((match) => match[2] ?? '')
    .filter((specifier) => /^(?:\.{0,2}\/|https?:)/i.test(specifier));
}

/** `target` resolved against `base`, when it is a URL on `origin` (a data: URL or another site is not the app's). */
export function onOrigin(target: string, base: string, origin: string): string | undefined {
  try {
    const url = new URL(target, base);
    url.hash = '';
    return url.origin === origin ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The URLs on `origin` of the files an HTML page at `pageUrl` has the browser load (with
 * `scriptsAndFrames`, of its `<script src>` and its frames' pages alone: what may run a script).
 */
export function subresourcesOf(html: string, pageUrl: string, origin: string, scriptsAndFrames = false): string[] {
  const found: string[] = [];
  for (const [, tag, attributes = ''] of html.matchAll(TOKEN)) {
    const name = tag?.toLowerCase();
    let target: string | undefined;
    if (name === 'script') target = attribute(attributes, 'src');
    // A frame's page is loaded with the page (a support widget, an embedded form).
    if (name !== undefined && FRAMES[name] !== undefined) target = attribute(attributes, FRAMES[name]);
    if (name === 'link' && !scriptsAndFrames) {
      const rels = (attribute(attributes, 'rel') ?? '').toLowerCase().split(/\s+/);
      if (rels.some((rel) => LOADED_LINKS.has(rel))) target = attribute(attributes, 'href');
    }
    const url = target === undefined ? undefined : onOrigin(target.trim(), pageUrl, origin);
    if (url !== undefined) found.push(url);
  }
  return found;
}

/** Each of `targets` resolved against `base`, those on `origin`. */
function onOriginAll(targets: string[], base: string, origin: string): string[] {
  return targets.flatMap((target) => onOrigin(target, base, origin) ?? []);
}

/**
 * The URLs on `origin` of the files an answer at `url` has the browser load with it: a page's files
 * (with `scriptsAndFrames`, the scripts it runs and the pages of its frames) and what its inline
 * scripts import or fetch; a script's imports and fetches. The leak checks and the redirect checks
 * read the same files by it.
 */
export function filesLoadedBy(
  body: string,
  url: string,
  contentType: string,
  origin: string,
  scriptsAndFrames = false,
): string[] {
  if (/javascript/i.test(contentType)) return onOriginAll(importsOf(body), url, origin);
  if (!/text\/html/i.test(contentType)) return [];
  const inline = inlineScriptsOf(body).flatMap((script) => importsOf(script));
  return [...subresourcesOf(body, url, origin, scriptsAndFrames), ...onOriginAll(inline, url, origin)];
}

/** The files on `origin` an exchange's page has the browser load: none unless it is one of the app's pages. */
export function pageFilesOf(x: Exchange, origin: string): string[] {
  const type = x.responseHeaders['content-type'] ?? '';
  if (!x.url.startsWith(origin) || !/text\/html/i.test(type)) return [];
  return filesLoadedBy(x.responseBody, x.url, type, origin);
}

/**
 * GETs, with `agent`, every file on the app's origin the pages the run saw have the browser load
 * (and a source map one of them names, or where one redirects), once each, up to MOST_FILES:
 * each is then one more exchange the leak checks search. A file that cannot be read (past the size
 * the audit reads, too slow, reset) is no flaw of the app: it is said, never searched, and the files
 * still waiting when the audit's `timeoutMs` has gone on them are left. Resolves with what was not
 * searched.
 */
export async function fetchSubresources(world: RecordedRun, agent: AuditAgent): Promise<string[]> {
  const { appOrigin, timeoutMs } = world.options;
  const fetched = new Set(world.exchanges.filter((x) => x.method === 'GET').map((x) => x.url));
  const queue: string[] = [];
  const want = (url: string | undefined) => {
    if (url === undefined || fetched.has(url) || queue.includes(url)) return;
    queue.push(url);
  };
  for (const x of world.exchanges) for (const url of x.unkeptBody?.files ?? pageFilesOf(x, appOrigin)) want(url);
  const unread: string[] = [];
  const started = Date.now();
  for (let n = 0; n < MOST_FILES && queue.length > 0; n++) {
    if (Date.now() - started >= timeoutMs) {
      unread.push(`${queue.length} file(s) the pages load not fetched: the audit's \`timeoutMs\` went on the others`);
      return unread;
    }
    const url = queue.shift() as string;
    fetched.add(url);
    try {
      const answer = await agent.request(url);
      // The browser follows a file's redirect (a name without its hash, to the hashed build): so
      // does the search, on the app's origin, each URL once.
      if (answer.status >= 300 && answer.status < 400 && answer.location !== null) {
        want(onOrigin(answer.location, url, appOrigin));
      }
      // Named in the file's last lines, or by its SourceMap (or older X-SourceMap) header.
      const map =
        SOURCE_MAP.exec(answer.body.slice(-2_000))?.[1] ??
        (answer.headers.sourcemap ?? answer.headers['x-sourcemap'])?.trim();
      if (answer.status === 200 && map !== undefined) want(onOrigin(map, url, appOrigin));
      // A module's imports load with it (a bundle's config chunk); a frame's page loads its own files.
      const type = answer.status === 200 ? (answer.headers['content-type'] ?? '') : '';
      for (const loaded of filesLoadedBy(answer.body, answer.url, type, appOrigin)) want(loaded);
    } catch (error) {
      // The app itself gone is the app's failure, not a file left unread.
      if (error instanceof UnreachableError) throw error;
      unread.push(`a file a page loads was not searched: ${describeThrown(error)}`);
    }
  }
  // Never a silent pass: what the cap left is said.
  if (queue.length > 0) {
    unread.push(`${queue.length} file(s) the pages load not fetched: the audit fetches at most ${MOST_FILES} in a run`);
  }
  return unread;
}
