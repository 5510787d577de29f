/**
 * The audit user's cookie jar, kept as a browser keeps one (RFC 6265 §5.3, §5.4): a cookie is
 * known by its name, domain and path; it goes only to hosts its domain matches and to paths its
 * path matches, longer paths first; ports play no part. The audit talks to one app and maybe
 * `*.localhost` names, so there is no public suffix list: a one-label Domain (`com`, `localhost`)
 * is taken for one, as the list's default rule does.
 */
import { isIP } from 'node:net';
import { cookieLineDeletes } from './cookie-lifetime.ts';

export interface StoredCookie {
  name: string;
  /** May be empty: `name=` is a cookie, and the browser sends it back as `name=`. */
  value: string;
  domain: string;
  path: string;
  /** Set without a Domain: sent to that very host only, not to the names under it. */
  hostOnly: boolean;
}

/** Space and tab around a cookie's name, value or attribute are not part of it (§5.2). */
function trimmed(text: string): string {
  return text.replace(/^[ \t]+|[ \t]+$/g, '');
}

function isIpAddress(host: string): boolean {
  return isIP(host.replace(/^\[|\]$/g, '')) !== 0;
}

/** §5.1.3: the host is the domain, or a name under it (never for an IP address). */
export function domainMatches(host: string, domain: string): boolean {
  return host === domain || (!isIpAddress(host) && host.endsWith(`.${domain}`));
}

/** §5.1.4: the cookie's path is the request's, or a directory of it (`/app` covers `/app/x`, not `/apps`). */
export function pathMatches(requestPath: string, cookiePath: string): boolean {
  if (requestPath === cookiePath) return true;
  if (!requestPath.startsWith(cookiePath)) return false;
  return cookiePath.endsWith('/') || requestPath[cookiePath.length] === '/';
}

/** §5.1.4: without a Path, a cookie's path is the directory of the page that set it. */
function defaultPath(requestPath: string): string {
  const last = requestPath.lastIndexOf('/');
  return !requestPath.startsWith('/') || last <= 0 ? '/' : requestPath.slice(0, last);
}

/** The last Domain and Path attributes of a line's attributes (§5.2.3, §5.2.4: the last one counts). */
function scopeAttributes(attributes: string[]): { domain?: string; path?: string } {
  const scope: { domain?: string; path?: string } = {};
  for (const attribute of attributes) {
    const eq = attribute.indexOf('=');
    const name = trimmed(eq === -1 ? attribute : attribute.slice(0, eq)).toLowerCase();
    const value = eq === -1 ? '' : trimmed(attribute.slice(eq + 1));
    // An empty Domain is ignored; a Path not starting with / means the default path.
    if (name === 'domain' && value.replace(/^\./, '') !== '') scope.domain = value.replace(/^\./, '').toLowerCase();
    if (name === 'path') scope.path = value.startsWith('/') ? value : undefined;
  }
  return scope;
}

/** §5.3 steps 4–6: where the cookie goes, or undefined when the browser refuses it (another site's Domain). */
function domainOf(attribute: string | undefined, host: string): Pick<StoredCookie, 'domain' | 'hostOnly'> | undefined {
  if (attribute === undefined) return { domain: host, hostOnly: true };
  // A public suffix is accepted only as the host itself, and then as if no Domain were given.
  if (!attribute.includes('.')) return attribute === host ? { domain: host, hostOnly: true } : undefined;
  return domainMatches(host, attribute) ? { domain: attribute, hostOnly: false } : undefined;
}

/** The cookie a Set-Cookie `line` from `url` stores, or undefined when a browser ignores the line. */
function parseSetCookie(line: string, url: URL): StoredCookie | undefined {
  const [pair = '', ...attributes] = line.split(';');
  const eq = pair.indexOf('=');
  const name = trimmed(pair.slice(0, eq));
  if (eq === -1 || name === '') return undefined;
  const scope = scopeAttributes(attributes);
  const where = domainOf(scope.domain, url.hostname);
  if (where === undefined) return undefined;
  return { name, value: trimmed(pair.slice(eq + 1)), ...where, path: scope.path ?? defaultPath(url.pathname) };
}

function sameCookie(a: StoredCookie, b: StoredCookie): boolean {
  return a.name === b.name && a.domain === b.domain && a.path === b.path;
}

function goesToHost(cookie: StoredCookie, host: string): boolean {
  return cookie.hostOnly ? host === cookie.domain : domainMatches(host, cookie.domain);
}

export class CookieJar {
  /** In creation order: a cookie replaced keeps its place (§5.3 step 11), and that order breaks ties when sending. */
  readonly #cookies: StoredCookie[] = [];

  /** Keeps what the Set-Cookie `lines` of an answer from `url` store, and drops what they delete. */
  keep(url: URL, lines: readonly string[]): void {
    for (const line of lines) {
      const cookie = parseSetCookie(line, url);
      if (cookie === undefined) continue;
      const at = this.#cookies.findIndex((held) => sameCookie(held, cookie));
      // A line deleting the cookie (Max-Age 0 or less, an Expires past) leaves the browser none to send.
      if (cookieLineDeletes(line)) {
        if (at !== -1) this.#cookies.splice(at, 1);
      } else if (at === -1) {
        this.#cookies.push(cookie);
      } else {
        this.#cookies[at] = cookie;
      }
    }
  }

  /** The Cookie header a browser sends with a request to `url` (§5.4), or undefined when it sends none. */
  headerFor(url: URL): string | undefined {
    const sent = this.#cookies.filter((c) => goesToHost(c, url.hostname) && pathMatches(url.pathname, c.path));
    // Longer paths first; the sort is stable, so among equal lengths the older cookie comes first.
    sent.sort((a, b) => b.path.length - a.path.length);
    return sent.length === 0 ? undefined : sent.map((c) => `${c.name}=${c.value}`).join('; ');
  }

  /** Copies of every cookie that goes to `url`'s host, whatever its path. */
  heldFor(url: URL): StoredCookie[] {
    return this.#cookies.filter((c) => goesToHost(c, url.hostname)).map((c) => ({ ...c }));
  }

  /** Stores `cookies` as another browser's jar held them (an attacker planting his cookies in a victim's browser). */
  plant(cookies: readonly StoredCookie[]): void {
    for (const cookie of cookies) {
      const at = this.#cookies.findIndex((held) => sameCookie(held, cookie));
      if (at === -1) this.#cookies.push({ ...cookie });
      else this.#cookies[at] = { ...cookie };
    }
  }
}

/** Whether `a` and `b` are one cookie (name, domain and path) holding one value. */
export function sameCookieAndValue(a: StoredCookie, b: StoredCookie): boolean {
  return sameCookie(a, b) && a.value === b.value;
}
