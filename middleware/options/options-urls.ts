/**
 * Checks of the kit's own addresses: the registered returnUrl (whose path is the landing's) and
 * the routes' paths. Messages quote URLs without their credentials.
 */
import type { Platform } from '../types.ts';
import { checkKnownKeys, CONTROL, optionGroup, quote, type OptionProblems } from './option-problems.ts';
import type { ResolvedRoutes } from './options.ts';
import { isLoopbackHostname } from './service-access.ts';

const ROUTE_PATH = /^\/[A-Za-z0-9._~\-/]*$/;
export const DEFAULT_ROUTES = {
  start: '/verify/start',
  startAgain: '/verify/start-again',
  mobileComplete: '/verify/mobile/complete',
  stepUp: '/verify/step-up',
} as const;

/** The returnUrl's parts the kit uses; both null for a mobile deep link or a wrong returnUrl. */
export interface ReturnUrlParts {
  origin: string | null;
  path: string | null;
}

/** The returnUrl as written, or a reason it cannot be (the first one found). */
function returnUrlProblem(value: unknown): string | URL {
  if (typeof value !== 'string' || value === '') {
    return '`returnUrl` must be the ONE return URL registered for this client, byte for byte, e.g. "https://app.example.com/verify/return".';
  }
  if (value.trim() !== value || CONTROL.test(value) || /\s/.test(value)) {
    return `\`returnUrl\` must contain no whitespace or control characters: got ${quote(value)}. Did you mean ${quote(value.trim())}?`;
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `\`returnUrl\` must be absolute (scheme, host and path) and registered for this client: got ${quote(value)}.`;
  }
  if (value.includes('?') || value.includes('#')) {
    const cut = value.split(/[?#]/, 1)[0] ?? '';
    return `\`returnUrl\` must be absolute with no query or fragment (the service appends session_id and state): got ${quote(value)}. Did you mean ${quote(cut)}?`;
  }
  if (url.username !== '' || url.password !== '') return '`returnUrl` must not contain credentials.';
  return url;
}

export function checkReturnUrl(problems: OptionProblems, value: unknown, platform: Platform): ReturnUrlParts {
  const none = { origin: null, path: null };
  const url = returnUrlProblem(value);
  if (typeof url === 'string') {
    problems.add(url);
    return none;
  }
  const shown = quote(value);
  const web = url.protocol === 'http:' || url.protocol === 'https:';
  if (platform === 'mobile') {
    if (web) {
      problems.add(
        `\`returnUrl\` for platform 'mobile' must be a custom-scheme deep link such as "com.example.app://verify/return": got ${shown}. For a browser flow use platform 'web'.`,
      );
    }
    return none;
  }
  if (!web) {
    problems.add(
      `\`returnUrl\` for platform 'web' must be an http(s) URL: got ${shown}. For a deep link into an app set platform: 'mobile'.`,
    );
    return none;
  }
  if (url.protocol === 'http:' && !isLoopbackHostname(url.hostname)) {
    const https = quote(String(value).replace(/^http:/, 'https:'));
    problems.add(`\`returnUrl\` must use https outside localhost: got ${shown}. Did you mean ${https}?`);
  }
  if (url.href !== value) {
    problems.add(
      `\`returnUrl\` must be written the way browsers read it, or the landing path would not match: got ${shown}, which browsers read as ${quote(url.href)}. Register and pass ${quote(url.href)} exactly.`,
    );
    return none;
  }
  return { origin: url.origin, path: url.pathname };
}

function routePath(problems: OptionProblems, name: keyof typeof DEFAULT_ROUTES, value: unknown): string | false {
  const fallback = DEFAULT_ROUTES[name];
  if (value === undefined) return fallback;
  if (value === false) return false;
  if (typeof value !== 'string' || !ROUTE_PATH.test(value) || value.includes('//')) {
    problems.add(
      `\`routes.${name}\` must be a plain absolute path such as ${quote(fallback)}, or false: got ${quote(value)}.`,
    );
    return fallback;
  }
  return value;
}

/** The routes each platform mounts, their paths checked and distinct. */
export function checkRoutes(
  problems: OptionProblems,
  value: unknown,
  platform: Platform,
  landingPath: string | null,
): ResolvedRoutes {
  const given = optionGroup(problems, 'routes', value);
  checkKnownKeys(problems, 'routes', given, ['start', 'startAgain', 'mobileComplete', 'landing', 'stepUp']);
  const isMobile = platform === 'mobile';
  if (given.landing !== undefined && typeof given.landing !== 'boolean') {
    problems.add("`routes.landing` must be true or false (the landing answers at the returnUrl's path).");
  }
  if (isMobile && given.landing === true) {
    problems.add(
      "`routes.landing` cannot be on for platform 'mobile': the deep link returns to the app, which calls the mobile completion route.",
    );
  }
  if (!isMobile && typeof given.mobileComplete === 'string') {
    problems.add("`routes.mobileComplete` needs platform 'mobile' and a deep-link returnUrl; leave it out on the web.");
  }
  const start = routePath(problems, 'start', given.start);
  const routes: ResolvedRoutes = {
    start,
    startAgain: isMobile || start === false ? false : routePath(problems, 'startAgain', given.startAgain),
    mobileComplete: isMobile ? routePath(problems, 'mobileComplete', given.mobileComplete) : false,
    landing: !isMobile && given.landing !== false && landingPath !== null ? landingPath : false,
    // Step-up's confirmation page is a browser's: web only, and only with a start route.
    stepUp: isMobile || start === false ? false : routePath(problems, 'stepUp', given.stepUp),
  };
  if (!isMobile && routes.start !== false && given.startAgain === false) {
    problems.add(
      "`routes.startAgain` cannot be false while the start route is on (platform 'web'): a used auto-submit page goes there instead of re-sending its handoff.",
    );
  }
  checkDistinct(problems, routes);
  return routes;
}

function checkDistinct(problems: OptionProblems, routes: ResolvedRoutes): void {
  const taken = new Map<string, string>();
  for (const [name, path] of Object.entries(routes)) {
    if (path === false) continue;
    const shown = name === 'landing' ? "the returnUrl's path" : `\`routes.${name}\``;
    const other = taken.get(path);
    if (other !== undefined)
      problems.add(`${shown} and ${other} are both ${quote(path)}; give each route its own path.`);
    taken.set(path, shown);
  }
}
