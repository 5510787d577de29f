/**
 * The factory's options, validated when `createVerificationKit` is called. Every problem is
 * reported at once, each message naming the fix. The client secret is never echoed.
 */
import BetterSqlite3 from 'better-sqlite3';
import type { Request } from 'express';
import { KitError, KitErrorCode } from './errors.ts';
import { deriveDestinationKey } from './limit-keys.ts';
import { createStartLimits, type StartLimits, type StartLimitsOptions } from './rate-limit.ts';
import { createMessageCatalog, type KitMessagesInput, type LocaleChooser, type MessageCatalog } from './messages.ts';
import { defaultPages, type PageRenderers } from './pages.ts';
import type { PostgresStore } from './store/postgres.ts';
import type { VerifyStore } from './store/types.ts';
import type { ActionDefinition, Platform, VerifyClient } from './types.ts';
import type { VerifyClientRetry, VerifyClientTimeouts } from './client.ts';
import type { OutcomeHook } from './outcomes.ts';

/** The signed-in user as the integrator knows them. */
export interface ResolvedUser {
  /**
   * Stable reference for this user (the same on every attempt: the hosted page's passkey
   * enrolment persists only when it is). Not an email or phone number that can change.
   */
  userRef: string;
  /** The phone destination the SMS goes to, taken from the server's own record of the user. */
  destination: string;
}

/** Pino-compatible: `logger.info({ ...fields }, 'message')`. */
export interface KitLogger {
  info(obj: Record<string, unknown>, msg: string): void;
  warn(obj: Record<string, unknown>, msg: string): void;
  error(obj: Record<string, unknown>, msg: string): void;
}

/** The hook for abuse limits: runs before a session is created (before any SMS). */
export type BeforeCreateHook = (
  req: Request,
  attempt: { userRef: string; destination: string; action: string },
) => void | Promise<void>;

export interface CsrfOptions {
  /**
   * REPLACES the kit's synchronizer-token check, for apps with their own CSRF defence. The kit's
   * Sec-Fetch-Site / Origin checks still run. Return true to accept the request.
   */
  dangerouslyReplaceTokenCheck?: (req: Request) => boolean | Promise<boolean>;
  /** Origins allowed in an `Origin` header besides the returnUrl's (web) origin. */
  allowedOrigins?: string[];
  /** Session key of the token. Default 'verifyKitCsrf'. */
  sessionKey?: string;
}

export interface LandingOptions {
  /** Status re-reads on a pending landing before the "still confirming" page. Default 3. */
  pendingRechecks?: number;
  /** Pause between those re-reads. Default 600 ms. */
  pendingRecheckIntervalMs?: number;
  /** The "still confirming" page's script checks again in the background every this many seconds. Default 3. */
  refreshSeconds?: number;
  /** It stops checking this long after the attempt was created; the sweep finishes it. Default 5 min. */
  refreshWindowMs?: number;
}

export interface VerificationKitOptions<Tx = unknown> {
  /** The service's base address, e.g. https://verify.example.com. */
  baseUrl: string;
  clientId: string;
  /** Issued by the portal. Stays on the server; only ever sent in the Authorization header. */
  clientSecret: string;
  /** The ONE registered return URL, byte for byte. The landing answers at its path. */
  returnUrl: string;
  /** 'web' (default) or 'mobile' (returnUrl is a custom-scheme deep link). */
  platform?: Platform;
  store: VerifyStore<Tx>;
  actions: readonly ActionDefinition<Tx>[];
  /** The signed-in user's stable userRef and destination; null when nobody is signed in. */
  resolveUser: (req: Request) => ResolvedUser | null | undefined | Promise<ResolvedUser | null | undefined>;
  /** POST route that starts a verification. Default '/verify/start'. */
  startPath?: string;
  /** GET page shown instead of re-sending a used auto-submit form. Default '/verify/start-again'. */
  startAgainPath?: string;
  /** POST JSON route completing a mobile flow. Default '/verify/mobile/complete'. */
  mobileCompletePath?: string;
  /** Switch routes off (e.g. to mount only the landing). Each defaults to on where it applies. */
  routes?: { start?: boolean; landing?: boolean; mobile?: boolean };
  csrf?: CsrfOptions;
  /**
   * Limits on starts per user, destination and client IP, against SMS pumping. Default on:
   * createStartLimits({ database: store.db }) with the SQLite store, createStartLimits({ postgres: store })
   * (shared by every instance) with the PostgreSQL store. Pass budgets to change them, or
   * a StartLimits on a shared store (createStartLimits({ limiters })) when the app runs as several instances.
   */
  limits?: StartLimitsOptions | StartLimits;
  /**
   * Turns the start limits off. Only for apps that enforce equal limits elsewhere:
   * every start sends an SMS at your cost.
   */
  dangerouslyDisableStartLimits?: boolean;
  /** Runs before each session create; throw KitError('rate_limited') to refuse (no session, no SMS). */
  beforeCreate?: BeforeCreateHook;
  /** A ready client (tests, DI). Default: createVerifyClient from baseUrl/clientId/clientSecret. */
  client?: VerifyClient;
  /** Passed to the default client. */
  clientTimeouts?: VerifyClientTimeouts;
  clientRetry?: VerifyClientRetry;
  /** Clock in ms. Default Date.now. */
  now?: () => number;
  logger?: KitLogger;
  pages?: Partial<PageRenderers>;
  /**
   * Texts of the kit's pages per locale tag, each merged over the English defaults:
   * `{ en: { startNew: 'Try again' }, fr: frenchMessages }`. Default: English only.
   */
  messages?: Readonly<Record<string, KitMessagesInput>>;
  /** Picks the locale tag for a request (e.g. from the user's profile). Default: the best `Accept-Language` match. */
  locale?: LocaleChooser;
  landing?: LandingOptions;
  /** Delay before the sweep first reads an attempt nobody landed. Default 3 min. */
  sweepFirstCheckAfterMs?: number;
  /**
   * After-commit hook for side effects that cannot run inside the transaction (email, analytics):
   * called for fulfilled, failed, expired and superseded attempts, at least once, after the
   * response. Give the sweep (worker or job) the same hook: it re-delivers what failed.
   */
  onOutcome?: OutcomeHook;
  /**
   * 'render' (default): the kit answers errors itself (an HTML page, or JSON on JSON routes) with
   * the KitError's status. 'next': KitErrors go to Express's error handler (`err.code`, `err.status`).
   */
  errors?: 'render' | 'next';
}

export interface KitConfig<Tx = unknown> {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** Exactly the string given; never rebuilt. */
  returnUrl: string;
  /** The returnUrl's origin (web) or null (mobile deep link). */
  returnOrigin: string | null;
  /** The path the landing answers at (web only). */
  landingPath: string | null;
  platform: Platform;
  store: VerifyStore<Tx>;
  actions: ReadonlyMap<string, ActionDefinition<Tx>>;
  resolveUser: VerificationKitOptions<Tx>['resolveUser'];
  startPath: string;
  startAgainPath: string;
  mobileCompletePath: string;
  routes: { start: boolean; landing: boolean; mobile: boolean };
  csrf: Required<Pick<CsrfOptions, 'allowedOrigins' | 'sessionKey'>> &
    Pick<CsrfOptions, 'dangerouslyReplaceTokenCheck'>;
  limits: StartLimits | undefined;
  beforeCreate: BeforeCreateHook | undefined;
  client: VerifyClient | undefined;
  clientTimeouts: VerifyClientTimeouts | undefined;
  clientRetry: VerifyClientRetry | undefined;
  now: () => number;
  logger: KitLogger;
  pages: PageRenderers;
  messages: MessageCatalog;
  landing: Required<LandingOptions>;
  sweepFirstCheckAfterMs: number;
  onOutcome: OutcomeHook | undefined;
  errors: 'render' | 'next';
}

const silentLogger: KitLogger = { info() {}, warn() {}, error() {} };

const ACTION_NAME = /^[a-z][a-z0-9_-]{0,63}$/;
const ROUTE_PATH = /^\/[A-Za-z0-9._~\-/]*$/;
const CONTROL = /[\u0000-\u001f\u007f]/;
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

function quote(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 200 ? `${value.slice(0, 200)}…` : value);
  if (value === undefined) return 'undefined';
  if (value === null) return 'null';
  return typeof value;
}

function isFn(value: unknown): value is (...args: never[]) => unknown {
  return typeof value === 'function';
}

/** Removes credentials from a URL-ish string before it is quoted in a message. */
function withoutUserinfo(value: string): string {
  return value.replace(/^([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)[^/?#]*@/, '$1');
}

function validateBaseUrl(value: unknown, problems: string[]): void {
  if (typeof value !== 'string' || value === '') {
    problems.push('`baseUrl` must be the service\'s base address, e.g. "https://verify.example.com".');
    return;
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    problems.push(
      `\`baseUrl\` must be an absolute URL such as "https://verify.example.com": got ${quote(withoutUserinfo(value))}.`,
    );
    return;
  }
  if (url.username !== '' || url.password !== '') {
    problems.push(
      '`baseUrl` must not carry credentials: pass them as `clientId` and `clientSecret` (sent only in the Authorization header).',
    );
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))) {
    problems.push(
      `\`baseUrl\` must use https (http is allowed only for a loopback emulator): got ${quote(withoutUserinfo(value))}.`,
    );
  }
  if (url.search !== '' || url.hash !== '') {
    problems.push(
      `\`baseUrl\` must have no query or fragment: got ${quote(withoutUserinfo(value))}. Did you mean ${quote(withoutUserinfo(`${url.origin}${url.pathname}`))}?`,
    );
  }
}

function validateReturnUrl(
  value: unknown,
  platform: Platform,
  problems: string[],
): { origin: string | null; path: string | null } {
  const none = { origin: null, path: null };
  if (typeof value !== 'string' || value === '') {
    problems.push(
      '`returnUrl` must be the ONE return URL registered for this client, byte for byte, e.g. "https://app.example.com/verify/return".',
    );
    return none;
  }
  if (value.trim() !== value || CONTROL.test(value) || /\s/.test(value)) {
    problems.push(
      `\`returnUrl\` must contain no whitespace or control characters: got ${quote(value)}. Did you mean ${quote(value.trim())}?`,
    );
    return none;
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    problems.push(
      `\`returnUrl\` must be absolute (scheme, host and path) and registered for this client: got ${quote(value)}.`,
    );
    return none;
  }
  if (value.includes('?') || value.includes('#')) {
    const cut = value.split(/[?#]/, 1)[0]!;
    problems.push(
      `\`returnUrl\` must be absolute with no query or fragment (the service appends session_id and state): got ${quote(value)}. Did you mean ${quote(cut)}?`,
    );
    return none;
  }
  if (url.username !== '' || url.password !== '') {
    problems.push('`returnUrl` must not contain credentials.');
    return none;
  }
  const web = url.protocol === 'http:' || url.protocol === 'https:';
  if (platform === 'mobile') {
    if (web) {
      problems.push(
        `\`returnUrl\` for platform 'mobile' must be a custom-scheme deep link such as "com.example.app://verify/return": got ${quote(value)}. For a browser flow use platform 'web'.`,
      );
    }
    return none;
  }
  if (!web) {
    problems.push(
      `\`returnUrl\` for platform 'web' must be an http(s) URL: got ${quote(value)}. For a deep link into an app set platform: 'mobile'.`,
    );
    return none;
  }
  if (url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname)) {
    problems.push(
      `\`returnUrl\` must use https outside localhost: got ${quote(value)}. Did you mean ${quote(value.replace(/^http:/, 'https:'))}?`,
    );
  }
  if (url.href !== value) {
    problems.push(
      `\`returnUrl\` must be written the way browsers read it, or the landing path would not match: got ${quote(value)}, which browsers read as ${quote(url.href)}. Register and pass ${quote(url.href)} exactly.`,
    );
    return none;
  }
  return { origin: url.origin, path: url.pathname };
}

function validateRoutePath(name: string, value: unknown, fallback: string, problems: string[]): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !ROUTE_PATH.test(value) || value.includes('//')) {
    problems.push(`\`${name}\` must be a plain absolute path such as ${quote(fallback)}: got ${quote(value)}.`);
    return fallback;
  }
  return value;
}

function validateActions<Tx>(value: unknown, problems: string[]): Map<string, ActionDefinition<Tx>> {
  const map = new Map<string, ActionDefinition<Tx>>();
  if (!Array.isArray(value) || value.length === 0) {
    problems.push(
      '`actions` must be a non-empty array of { name, operationSensitivity, successPath, prepare?, fulfil }.',
    );
    return map;
  }
  value.forEach((candidate: unknown, index) => {
    const at = `actions[${index}]`;
    if (typeof candidate !== 'object' || candidate === null) {
      problems.push(`\`${at}\` must be an object { name, operationSensitivity, successPath, prepare?, fulfil }.`);
      return;
    }
    const action = candidate as Partial<ActionDefinition<Tx>>;
    if (typeof action.name !== 'string' || !ACTION_NAME.test(action.name)) {
      problems.push(
        `\`${at}.name\` must match ${ACTION_NAME} (lowercase, e.g. "change_payout"): got ${quote(action.name)}.`,
      );
      return;
    }
    const named = `${at} ("${action.name}")`;
    if (map.has(action.name)) problems.push(`\`${named}\`: the name is registered twice; action names must be unique.`);
    if (action.operationSensitivity !== 'normal' && action.operationSensitivity !== 'sensitive') {
      problems.push(
        `\`${named}.operationSensitivity\` must be 'normal' or 'sensitive': got ${quote(action.operationSensitivity)}.`,
      );
    }
    const path = action.successPath;
    if (
      typeof path !== 'string' ||
      !path.startsWith('/') ||
      path.startsWith('//') ||
      path.includes('\\') ||
      CONTROL.test(path)
    ) {
      problems.push(
        `\`${named}.successPath\` must be a same-origin path starting with a single "/" (e.g. "/account"): got ${quote(path)}. It is fixed on the server; never a URL from the request.`,
      );
    }
    if (!isFn(action.fulfil)) {
      problems.push(`\`${named}.fulfil\` must be a function (tx, attempt) => void (async only on PostgreSQL).`);
    }
    if (action.prepare !== undefined && !isFn(action.prepare)) {
      problems.push(`\`${named}.prepare\` must be a function (req, context) => params, or omitted.`);
    }
    if (action.ordering !== undefined && action.ordering !== 'latest' && action.ordering !== 'independent') {
      problems.push(
        `\`${named}.ordering\` must be 'latest' (the newest verified attempt of a user wins; the default) ` +
          `or 'independent' (every verified attempt applies): got ${quote(action.ordering)}.`,
      );
    }
    map.set(action.name, action as ActionDefinition<Tx>);
  });
  return map;
}

function positive(name: string, value: unknown, fallback: number, problems: string[], allowZero = false): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (!allowZero && value === 0)) {
    problems.push(`\`${name}\` must be a ${allowZero ? 'non-negative' : 'positive'} number: got ${quote(value)}.`);
    return fallback;
  }
  return value;
}

export function validateOptions<Tx>(options: VerificationKitOptions<Tx>): KitConfig<Tx> {
  const problems: string[] = [];
  if (typeof options !== 'object' || options === null) {
    throw new KitError(KitErrorCode.InvalidConfig, 'createVerificationKit(options): options must be an object.');
  }
  const o = options as Partial<VerificationKitOptions<Tx>> & Record<string, unknown>;

  validateBaseUrl(o.baseUrl, problems);
  if (typeof o.clientId !== 'string' || o.clientId === '' || o.clientId.includes(':') || CONTROL.test(o.clientId)) {
    problems.push(
      `\`clientId\` must be the client id issued by the portal (non-empty, no ":" or control characters): got ${quote(o.clientId)}.`,
    );
  }
  // The secret's value is never quoted, not even in part.
  if (typeof o.clientSecret !== 'string' || o.clientSecret === '') {
    problems.push(
      "`clientSecret` must be the secret issued by the portal, read from the server's environment (e.g. process.env.VERIFY_CLIENT_SECRET); it is missing or not a string.",
    );
  } else if (CONTROL.test(o.clientSecret) || o.clientSecret.trim() !== o.clientSecret) {
    problems.push(
      '`clientSecret` contains whitespace or control characters (a trailing newline from a file?); trim it.',
    );
  }

  const platform = o.platform ?? 'web';
  if (platform !== 'web' && platform !== 'mobile') {
    problems.push(`\`platform\` must be 'web' or 'mobile': got ${quote(platform)}.`);
  }
  const ret = validateReturnUrl(o.returnUrl, platform === 'mobile' ? 'mobile' : 'web', problems);

  const store = o.store as Partial<VerifyStore<Tx>> | undefined;
  if (
    typeof store !== 'object' ||
    store === null ||
    !isFn(store.insertAttempt) ||
    !isFn(store.findAttemptByState) ||
    !isFn(store.fulfilOnce) ||
    !isFn(store.fulfilBatch) ||
    !isFn(store.recordFailure)
  ) {
    problems.push('`store` must be a VerifyStore, e.g. createSqliteStore({ database: "./data/app.sqlite" }).');
  }
  const actions = validateActions<Tx>(o.actions, problems);
  if (!isFn(o.resolveUser)) {
    problems.push(
      "`resolveUser` must be a function (req) => { userRef, destination } | null giving the signed-in user's stable userRef and phone destination.",
    );
  }

  const startPath = validateRoutePath('startPath', o.startPath, '/verify/start', problems);
  const startAgainPath = validateRoutePath('startAgainPath', o.startAgainPath, '/verify/start-again', problems);
  const mobileCompletePath = validateRoutePath(
    'mobileCompletePath',
    o.mobileCompletePath,
    '/verify/mobile/complete',
    problems,
  );

  const routesIn = (o.routes ?? {}) as Record<string, unknown>;
  for (const key of Object.keys(routesIn)) {
    if (!['start', 'landing', 'mobile'].includes(key))
      problems.push(`\`routes.${key}\` is not a route; use start, landing or mobile.`);
    else if (routesIn[key] !== undefined && typeof routesIn[key] !== 'boolean')
      problems.push(`\`routes.${key}\` must be true or false.`);
  }
  const isMobile = platform === 'mobile';
  const routes = {
    start: routesIn.start !== false,
    landing: routesIn.landing === undefined ? !isMobile : routesIn.landing === true,
    mobile: routesIn.mobile === undefined ? isMobile : routesIn.mobile === true,
  };
  if (isMobile && routes.landing) {
    problems.push(
      "`routes.landing` cannot be on for platform 'mobile': the deep link returns to the app, which calls the mobile completion route.",
    );
  }
  if (!isMobile && routes.mobile) {
    problems.push("`routes.mobile` needs platform 'mobile' and a deep-link returnUrl.");
  }
  const taken = new Map<string, string>();
  for (const [name, path, on] of [
    ['startPath', startPath, routes.start],
    ['startAgainPath', startAgainPath, routes.start && !isMobile],
    ['mobileCompletePath', mobileCompletePath, routes.mobile],
    ['the returnUrl path', ret.path ?? '', routes.landing],
  ] as const) {
    if (!on || path === '') continue;
    const other = taken.get(path);
    if (other !== undefined)
      problems.push(`\`${name}\` and ${other} are both ${quote(path)}; give each route its own path.`);
    taken.set(path, name);
  }

  const csrfIn = (o.csrf ?? {}) as CsrfOptions;
  if (csrfIn.dangerouslyReplaceTokenCheck !== undefined && !isFn(csrfIn.dangerouslyReplaceTokenCheck)) {
    problems.push('`csrf.dangerouslyReplaceTokenCheck` must be a function (req) => boolean.');
  }
  const allowedOrigins = csrfIn.allowedOrigins ?? [];
  if (
    !Array.isArray(allowedOrigins) ||
    allowedOrigins.some((x) => typeof x !== 'string' || !/^https?:\/\/[^/]+$/.test(x))
  ) {
    problems.push(
      '`csrf.allowedOrigins` must be origins such as "https://app.example.com" (scheme and host, no path).',
    );
  }

  for (const name of ['beforeCreate', 'now', 'onOutcome'] as const) {
    if (o[name] !== undefined && !isFn(o[name])) problems.push(`\`${name}\` must be a function.`);
  }
  const client = o.client as Partial<VerifyClient> | undefined;
  if (
    client !== undefined &&
    (typeof client !== 'object' ||
      client === null ||
      !isFn(client.createSession) ||
      !isFn(client.getSession) ||
      !isFn(client.close))
  ) {
    problems.push('`client` must be a VerifyClient (createVerifyClient(...)), or omitted.');
  }
  const logger = o.logger as Partial<KitLogger> | undefined;
  if (
    logger !== undefined &&
    (typeof logger !== 'object' || logger === null || !isFn(logger.info) || !isFn(logger.warn) || !isFn(logger.error))
  ) {
    problems.push('`logger` must have info, warn and error methods (pino-compatible), or be omitted.');
  }
  const limits = startLimitsFrom(
    o.limits,
    o.dangerouslyDisableStartLimits,
    store,
    { clientSecret: typeof o.clientSecret === 'string' ? o.clientSecret : '', logger: o.logger ?? silentLogger },
    problems,
  );
  const pages = (o.pages ?? {}) as Record<string, unknown>;
  for (const [key, fn] of Object.entries(pages)) {
    if (!['complete', 'failed', 'pending', 'startAgain', 'error'].includes(key)) {
      problems.push(
        `\`pages.${key}\` is not an overridable page; use complete, failed, pending, startAgain or error (the auto-submit page is fixed).`,
      );
    } else if (!isFn(fn)) problems.push(`\`pages.${key}\` must be a function returning HTML.`);
  }
  validateMessages(o.messages, o.locale, problems);
  if (o.errors !== undefined && o.errors !== 'render' && o.errors !== 'next') {
    problems.push(`\`errors\` must be 'render' or 'next': got ${quote(o.errors)}.`);
  }
  const landingIn = (o.landing ?? {}) as LandingOptions;
  const landing: Required<LandingOptions> = {
    pendingRechecks: positive('landing.pendingRechecks', landingIn.pendingRechecks, 3, problems, true),
    pendingRecheckIntervalMs: positive(
      'landing.pendingRecheckIntervalMs',
      landingIn.pendingRecheckIntervalMs,
      600,
      problems,
      true,
    ),
    refreshSeconds: positive('landing.refreshSeconds', landingIn.refreshSeconds, 3, problems),
    refreshWindowMs: positive('landing.refreshWindowMs', landingIn.refreshWindowMs, 5 * 60_000, problems, true),
  };
  const sweepFirstCheckAfterMs = positive(
    'sweepFirstCheckAfterMs',
    o.sweepFirstCheckAfterMs,
    3 * 60_000,
    problems,
    true,
  );

  if (problems.length > 0) {
    throw new KitError(
      KitErrorCode.InvalidConfig,
      `createVerificationKit: ${problems.length === 1 ? problems[0] : `\n  - ${problems.join('\n  - ')}`}`,
    );
  }

  return {
    baseUrl: o.baseUrl!,
    clientId: o.clientId!,
    clientSecret: o.clientSecret!,
    returnUrl: o.returnUrl!,
    returnOrigin: ret.origin,
    landingPath: ret.path,
    platform,
    store: store as VerifyStore<Tx>,
    actions,
    resolveUser: o.resolveUser!,
    startPath,
    startAgainPath,
    mobileCompletePath,
    routes,
    csrf: {
      allowedOrigins,
      sessionKey: csrfIn.sessionKey ?? 'verifyKitCsrf',
      dangerouslyReplaceTokenCheck: csrfIn.dangerouslyReplaceTokenCheck,
    },
    limits,
    beforeCreate: o.beforeCreate,
    client: o.client,
    clientTimeouts: o.clientTimeouts,
    clientRetry: o.clientRetry,
    now: o.now ?? Date.now,
    logger: o.logger ?? silentLogger,
    pages: { ...defaultPages, ...o.pages },
    messages: createMessageCatalog(o.messages, o.locale),
    landing,
    sweepFirstCheckAfterMs,
    onOutcome: o.onOutcome,
    errors: o.errors ?? 'render',
  };
}

const LOCALE_TAG = /^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$/;

function validateMessages(messages: unknown, locale: unknown, problems: string[]): void {
  if (locale !== undefined && !isFn(locale)) {
    problems.push('`locale` must be a function (req) => locale tag such as "fr", or omitted.');
  }
  if (messages === undefined) return;
  if (typeof messages !== 'object' || messages === null || Array.isArray(messages)) {
    problems.push('`messages` must be an object of locale tag to texts, e.g. { fr: { startNew: "Recommencer" } }.');
    return;
  }
  for (const [tag, texts] of Object.entries(messages)) {
    if (!LOCALE_TAG.test(tag)) {
      problems.push(`\`messages\` key ${quote(tag)} must be a locale tag such as "fr" or "pt-BR".`);
    }
    if (typeof texts !== 'object' || texts === null || Array.isArray(texts)) {
      problems.push(`\`messages.${tag}\` must be an object of texts (any subset of the English messages).`);
    }
  }
}

/** The start limits: the integrator's, or the default on the SQLite store's database. */
function startLimitsFrom(
  given: unknown,
  disabled: unknown,
  store: unknown,
  secrets: { clientSecret: string; logger: KitLogger },
  problems: string[],
): StartLimits | undefined {
  const { clientSecret, logger } = secrets;
  if (disabled === true) {
    if (given !== undefined) problems.push('Pass either `limits` or `dangerouslyDisableStartLimits: true`, not both.');
    return undefined;
  }
  if (given !== undefined && (typeof given !== 'object' || given === null)) {
    problems.push(
      '`limits` must be start limit options ({ perUser, perDestination, perIp, limiters }) or createStartLimits(...).',
    );
    return undefined;
  }
  if (typeof given === 'object' && given !== null && 'consume' in given && isFn(given.consume))
    return given as StartLimits;
  const storeDb =
    typeof store === 'object' && store !== null && 'db' in store && store.db instanceof BetterSqlite3
      ? store.db
      : undefined;
  // Several instances share one PostgreSQL store, so they share its counters too.
  const isPostgres = typeof store === 'object' && store !== null && 'kind' in store && store.kind === 'postgres';
  const postgres = isPostgres ? (store as PostgresStore) : undefined;
  try {
    return createStartLimits({
      ...(postgres === undefined ? { database: storeDb } : { postgres }),
      destinationKey: deriveDestinationKey(clientSecret),
      logger,
      ...(given as StartLimitsOptions | undefined),
    });
  } catch (error) {
    problems.push(
      error instanceof KitError && storeDb === undefined && postgres === undefined && given === undefined
        ? 'Start limits need a counter store: use the SQLite or PostgreSQL store, pass ' +
            '`limits: createStartLimits({ limiters })` on a shared store, or (only with equal limits elsewhere) ' +
            '`dangerouslyDisableStartLimits: true`.'
        : `\`limits\`: ${(error as Error).message}`,
    );
    return undefined;
  }
}
