/**
 * `resolveKitOptions`: every option of createVerificationKit checked, defaults filled in, all
 * problems reported at once. No side effects: the factory builds the client and the start limits
 * from the result. The client secret's value is never quoted, not even in part.
 */
import { KitError, KitErrorCode, rememberSecret } from '../errors.ts';
import { defaultLogger, safeLogger } from '../logger.ts';
import { createMessageCatalog } from '../pages/messages.ts';
import {
  checkKnownKeys,
  checkOptionNames,
  hasMethods,
  integerInRange,
  isFunction,
  isRecord,
  nonNegative,
  optionalFunction,
  optionGroup,
  OptionProblems,
  quote,
} from './option-problems.ts';
import { PENDING_REUSE_MS } from '../client/coalesce.ts';
import { checkSettings, connectionsProblem } from '../client/client-options.ts';
import { checkActionStepUps } from './options-action-step-up.ts';
import { checkActions } from './options-actions.ts';
import { checkScopes } from './options-scopes.ts';
import { checkNumberOptions } from './options-numbers.ts';
import { checkReturnUrl, checkRoutes } from './options-urls.ts';
import { checkBaseUrl, checkCredentials } from './service-access.ts';
import type { ClientSettings, ResolvedKitOptions, VerificationKitOptions } from './options.ts';
import type { PageRenderers } from '../pages/pages.ts';
import { guardLocale, guardMessages, guardPages } from '../pages/guard.ts';
import { DEFAULT_HOOK_TIMEOUTS, HOOK_NAMES, type HookTimeouts } from '../deadline.ts';
import type { Platform, VerifyClient } from '../types.ts';
import { checkReadCap } from '../sweep/sweep-options.ts';
import { checkPumping } from './options-pumping.ts';
import { START_LIMIT_OPTION_NAMES } from '../limits/start-limits.ts';

const PAGE_NAMES = ['complete', 'failed', 'pending', 'startAgain', 'enterNumber', 'error'] as const;
const LOCALE_TAG = /^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$/;

/** A ready client has the client's methods; anything else passed as `client` is settings. */
export function isVerifyClient(value: VerifyClient | ClientSettings): value is VerifyClient {
  return hasMethods(value, ['createSession', 'getSession', 'close']);
}

function checkPlatform(problems: OptionProblems, value: unknown): Platform {
  if (value === undefined || value === 'web' || value === 'mobile') return value ?? 'web';
  problems.add(`\`platform\` must be 'web' or 'mobile': got ${quote(value)}.`);
  return 'web';
}

function checkClient(problems: OptionProblems, value: unknown): void {
  if (value === undefined) return;
  if (hasMethods(value, ['createSession', 'getSession', 'close'])) return;
  if (isRecord(value) && !('createSession' in value) && !('getSession' in value)) {
    checkKnownKeys(problems, 'client', value, ['timeouts', 'retry', 'connections']);
    const problem = value.connections === undefined ? undefined : connectionsProblem(value.connections);
    if (problem !== undefined) problems.add(`\`client.connections\` ${problem}.`);
    for (const key of ['timeouts', 'retry'] as const) {
      if (value[key] !== undefined && !isRecord(value[key])) problems.add(`\`client.${key}\` must be an object.`);
      checkSettings(problems, key, value[key], 'client.');
    }
    return;
  }
  problems.add(
    '`client` must be a VerifyClient (createVerifyClient(...)), or settings { timeouts?, retry?, connections? }, or omitted.',
  );
}

function checkCollaborators(problems: OptionProblems, o: Record<string, unknown>): void {
  if (!hasMethods(o.store, ['insertAttempt', 'findAttemptByState', 'fulfilBatch', 'recordFailure'])) {
    problems.add('`store` must be a VerifyStore, e.g. createSqliteStore({ database: "./data/app.sqlite" }).');
  }
  if (!isFunction(o.resolveUser)) {
    problems.add(
      "`resolveUser` must be a function (req) => { userRef, destination } | null giving the signed-in user's stable userRef and phone destination.",
    );
  }
  if (o.logger !== undefined && !hasMethods(o.logger, ['info', 'warn', 'error'])) {
    problems.add('`logger` must have info, warn and error methods (pino-compatible), or be omitted.');
  }
  checkClient(problems, o.client);
}

/** Only the shape: createStartLimits checks the budgets and the counter. */
function checkLimits(problems: OptionProblems, limits: unknown, disabled: unknown): void {
  if (disabled !== undefined && typeof disabled !== 'boolean') {
    problems.add('`dangerouslyDisableStartLimits` must be true or false.');
  }
  if (disabled === true && limits !== undefined) {
    problems.add('Pass either `limits` or `dangerouslyDisableStartLimits: true`, not both.');
  }
  if (limits !== undefined && !isRecord(limits)) {
    problems.add(
      '`limits` must be start limit options ({ perUser, perDestination, perUserNumbers, perIp, store, ... }) or createStartLimits(...).',
    );
  } else if (limits !== undefined && typeof limits.consume !== 'function') {
    // `database`, an option of older releases, is told what replaced it when the limits are built.
    const named = Object.fromEntries(Object.entries(limits).filter(([key]) => key !== 'database'));
    checkOptionNames(problems, named, START_LIMIT_OPTION_NAMES, 'limits.');
  }
}

function checkPages(problems: OptionProblems, value: Partial<PageRenderers> | undefined): void {
  const given = optionGroup(problems, 'pages', value);
  for (const [key, render] of Object.entries(given)) {
    if (!PAGE_NAMES.some((name) => name === key)) {
      problems.add(
        `\`pages.${key}\` is not an overridable page; use ${PAGE_NAMES.join(', ')} (the auto-submit page is fixed).`,
      );
    } else if (!isFunction(render)) problems.add(`\`pages.${key}\` must be a function returning HTML.`);
  }
}

/** Each callback's deadline: the defaults, with the given ones over them. */
function checkHookTimeouts(problems: OptionProblems, value: unknown): HookTimeouts {
  const given = optionGroup(problems, 'hookTimeouts', value);
  checkKnownKeys(problems, 'hookTimeouts', given, HOOK_NAMES);
  const timeouts: Record<string, number> = {};
  for (const name of HOOK_NAMES) {
    timeouts[name] = integerInRange(problems, `hookTimeouts.${name}`, given[name], {
      min: 1,
      max: 600_000,
      fallback: DEFAULT_HOOK_TIMEOUTS[name],
      unit: ' ms',
    });
  }
  return timeouts as HookTimeouts;
}

function checkMessages(problems: OptionProblems, messages: unknown): void {
  if (messages === undefined) return;
  if (!isRecord(messages)) {
    problems.add('`messages` must be an object of locale tag to texts, e.g. { fr: { startNew: "Recommencer" } }.');
    return;
  }
  for (const [tag, texts] of Object.entries(messages)) {
    if (!LOCALE_TAG.test(tag))
      problems.add(`\`messages\` key ${quote(tag)} must be a locale tag such as "fr" or "pt-BR".`);
    if (!isRecord(texts)) {
      problems.add(`\`messages.${tag}\` must be an object of texts (any subset of the English messages).`);
    }
  }
}

function checkCsrf(problems: OptionProblems, value: VerificationKitOptions['csrf']): ResolvedKitOptions['csrf'] {
  const csrf = optionGroup(problems, 'csrf', value);
  checkKnownKeys(problems, 'csrf', csrf, ['dangerouslyReplaceTokenCheck', 'allowedOrigins', 'sessionKey']);
  const allowedOrigins = value?.allowedOrigins ?? [];
  if (
    !Array.isArray(allowedOrigins) ||
    allowedOrigins.some((x) => typeof x !== 'string' || !/^https?:\/\/[^/]+$/.test(x))
  ) {
    problems.add('`csrf.allowedOrigins` must be origins such as "https://app.example.com" (scheme and host, no path).');
  }
  const sessionKey = value?.sessionKey ?? 'verifyKitCsrf';
  if (typeof sessionKey !== 'string' || sessionKey === '')
    problems.add('`csrf.sessionKey` must be a non-empty string.');
  const replace = optionalFunction(
    problems,
    'csrf.dangerouslyReplaceTokenCheck',
    value?.dangerouslyReplaceTokenCheck,
    'a function (req) => boolean',
  );
  return { allowedOrigins, sessionKey, ...(replace === undefined ? {} : { dangerouslyReplaceTokenCheck: replace }) };
}

/** A pending answer reused as long as the re-check interval makes every re-check of a landing reuse it. */
function checkPendingReuse(
  problems: OptionProblems,
  landing: { pendingRechecks: number; pendingRecheckIntervalMs: number; pendingReuseMs: number },
): void {
  const { pendingRechecks, pendingRecheckIntervalMs: interval, pendingReuseMs: reuse } = landing;
  if (pendingRechecks === 0 || reuse === 0 || reuse < interval) return;
  const below = Math.max(0, Math.floor(interval * 0.8));
  problems.add(
    `\`landing.pendingReuseMs\` (${reuse} ms) must be below \`landing.pendingRecheckIntervalMs\` (${interval} ms): ` +
      "otherwise every re-check of a landing reuses the cached 'pending' and never reads the service. " +
      `Pass e.g. landing: { pendingReuseMs: ${below} }, or 0 to reuse nothing.`,
  );
}

function checkTimings(problems: OptionProblems, o: Pick<VerificationKitOptions, 'landing' | 'sweep'>) {
  const given = optionGroup(problems, 'landing', o.landing);
  checkKnownKeys(problems, 'landing', given, [
    'pendingRechecks',
    'pendingRecheckIntervalMs',
    'refreshSeconds',
    'refreshWindowMs',
    'pendingReuseMs',
  ]);
  const sweep = optionGroup(problems, 'sweep', o.sweep);
  checkKnownKeys(problems, 'sweep', sweep, ['firstCheckAfterMs', 'maxReadsPerSecond']);
  const landing = {
    pendingRechecks: nonNegative(problems, 'landing.pendingRechecks', given.pendingRechecks, 3),
    pendingRecheckIntervalMs: nonNegative(
      problems,
      'landing.pendingRecheckIntervalMs',
      given.pendingRecheckIntervalMs,
      600,
    ),
    refreshSeconds: nonNegative(problems, 'landing.refreshSeconds', given.refreshSeconds, 3, false),
    refreshWindowMs: nonNegative(problems, 'landing.refreshWindowMs', given.refreshWindowMs, 5 * 60_000),
    pendingReuseMs: nonNegative(problems, 'landing.pendingReuseMs', given.pendingReuseMs, PENDING_REUSE_MS),
  };
  checkPendingReuse(problems, landing);
  return {
    landing,
    sweep: {
      firstCheckAfterMs: nonNegative(problems, 'sweep.firstCheckAfterMs', sweep.firstCheckAfterMs, 3 * 60_000),
      maxReadsPerSecond: checkReadCap(problems, sweep.maxReadsPerSecond, 'sweep.maxReadsPerSecond'),
    },
  };
}

/** Checks every option (reporting all problems in one KitError invalid_options) and fills in defaults. */
/** Every option of createVerificationKit: the type says when one is added or renamed. */
const KIT_OPTION_NAMES = Object.keys({
  baseUrl: true,
  clientId: true,
  clientSecret: true,
  returnUrl: true,
  platform: true,
  store: true,
  actions: true,
  scopes: true,
  resolveUser: true,
  client: true,
  routes: true,
  csrf: true,
  limits: true,
  dangerouslyDisableStartLimits: true,
  pumping: true,
  beforeCreate: true,
  defaultCountry: true,
  destinationPolicy: true,
  now: true,
  logger: true,
  pages: true,
  messages: true,
  locale: true,
  landing: true,
  sweep: true,
  onOutcome: true,
  hookTimeouts: true,
  errors: true,
} satisfies Record<keyof VerificationKitOptions<unknown>, true>);

/** The option names, and what reaching the service takes: its address and the client's credentials. */
function checkServiceAccess<Tx>(
  problems: OptionProblems,
  fields: Record<string, unknown>,
  options: VerificationKitOptions<Tx>,
): void {
  checkOptionNames(problems, fields, KIT_OPTION_NAMES);
  checkBaseUrl(problems, options.baseUrl, options.clientSecret);
  checkCredentials(problems, options.clientId, options.clientSecret);
}

export function resolveKitOptions<Tx>(options: VerificationKitOptions<Tx>): ResolvedKitOptions<Tx> {
  const fields: unknown = options;
  if (!isRecord(fields)) {
    throw new KitError(KitErrorCode.InvalidOptions, 'createVerificationKit(options): options must be an object.');
  }
  // Before any check can quote it: no message ever carries the secret.
  rememberSecret(options.clientSecret, options.clientId);
  const problems = new OptionProblems('createVerificationKit');
  checkServiceAccess(problems, fields, options);
  const platform = checkPlatform(problems, options.platform);
  const returned = checkReturnUrl(problems, options.returnUrl, platform);
  const routes = checkRoutes(problems, options.routes, platform, returned.path);
  const actions = checkActions(problems, options.actions, options.store);
  const scopes = checkScopes(problems, options.scopes, { actions, store: options.store, platform, routes });
  checkActionStepUps(problems, options.actions, { scopes, platform, startRoute: routes.start !== false });
  checkCollaborators(problems, fields);
  checkLimits(problems, options.limits, options.dangerouslyDisableStartLimits);
  const beforeCreate = optionalFunction(problems, 'beforeCreate', options.beforeCreate);
  const numbers = checkNumberOptions(problems, options.defaultCountry, options.destinationPolicy);
  const now = optionalFunction(problems, 'now', options.now) ?? Date.now;
  const onOutcome = optionalFunction(problems, 'onOutcome', options.onOutcome);
  const locale = optionalFunction(problems, 'locale', options.locale, 'a function (req) => locale tag such as "fr"');
  checkPages(problems, options.pages);
  checkMessages(problems, options.messages);
  const hookTimeouts = checkHookTimeouts(problems, options.hookTimeouts);
  if (options.errors !== undefined && options.errors !== 'render' && options.errors !== 'next') {
    problems.add(`\`errors\` must be 'render' or 'next': got ${quote(options.errors)}.`);
  }
  const csrf = checkCsrf(problems, options.csrf);
  const grouped = { ...checkTimings(problems, options), pumping: checkPumping(problems, options) };
  problems.throwIfAny();
  // Every line the kit writes goes through the one guard: a failing logger never disturbs a request.
  const logger = safeLogger(options.logger ?? defaultLogger());

  return {
    baseUrl: options.baseUrl,
    clientId: options.clientId,
    clientSecret: options.clientSecret,
    returnUrl: options.returnUrl,
    store: options.store,
    resolveUser: options.resolveUser,
    limits: options.limits,
    dangerouslyDisableStartLimits: options.dangerouslyDisableStartLimits,
    platform,
    returnOrigin: returned.origin,
    routes,
    actions,
    scopes,
    client: options.client ?? {},
    csrf,
    beforeCreate,
    ...numbers,
    now,
    onOutcome,
    logger,
    // The integrator's renderers and chooser cannot break the kit's error path: see guard.ts.
    pages: guardPages(options.pages, logger),
    messages: createMessageCatalog(guardMessages(options.messages, logger), guardLocale(locale, logger)),
    hookTimeouts,
    errors: options.errors ?? 'render',
    ...grouped,
  };
}
