/**
 * `resolveKitOptions`: every option of createVerificationKit checked, defaults filled in, all
 * problems reported at once. No side effects: the factory builds the client and the start limits
 * from the result. The client secret's value is never quoted, not even in part. The objects the
 * app hands the kit are checked in options-collaborators.ts, its timings in options-timings.ts.
 */
import { KitError, KitErrorCode, rememberSecret } from '../errors.ts';
import { defaultLogger, safeLogger } from '../logger.ts';
import { createMessageCatalog } from '../pages/messages.ts';
import {
  checkKnownKeys,
  checkOptionNames,
  isFunction,
  isRecord,
  optionalFunction,
  optionGroup,
  OptionProblems,
  quote,
} from './option-problems.ts';
import { checkActionStepUps } from './options-action-step-up.ts';
import { checkActions } from './options-actions.ts';
import { checkCollaborators, checkLimits } from './options-collaborators.ts';
import { checkScopes } from './options-scopes.ts';
import { checkNumberOptions } from './options-numbers.ts';
import { checkHookTimeouts, checkTimings } from './options-timings.ts';
import { checkReturnUrl, checkRoutes } from './options-urls.ts';
import { checkBaseUrl, checkCredentials } from './service-access.ts';
import type { ResolvedKitOptions, VerificationKitOptions } from './options.ts';
import type { PageRenderers } from '../pages/pages.ts';
import { guardLocale, guardMessages, guardPages } from '../pages/guard.ts';
import type { Platform } from '../types.ts';
import { checkPumping } from './options-pumping.ts';

export { isVerifyClient } from './options-collaborators.ts';

const PAGE_NAMES = ['complete', 'failed', 'pending', 'startAgain', 'enterNumber', 'error'] as const;
const LOCALE_TAG = /^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$/;

function checkPlatform(problems: OptionProblems, value: unknown): Platform {
  if (value === undefined || value === 'web' || value === 'mobile') return value ?? 'web';
  problems.add(`\`platform\` must be 'web' or 'mobile': got ${quote(value)}.`);
  return 'web';
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

/**
 * The app's clock, in whole milliseconds: one built on `performance.now()` answers fractions, which
 * the stores' integer columns refuse (every start failed on them).
 */
function inWholeMilliseconds(clock: (() => number) | undefined): (() => number) | undefined {
  return clock === undefined ? undefined : () => Math.floor(clock());
}

export function resolveKitOptions<Tx>(options: VerificationKitOptions<Tx>): ResolvedKitOptions<Tx> {
  const fields: unknown = options;
  if (!isRecord(fields)) {
    throw new KitError(KitErrorCode.InvalidOptions, 'createVerificationKit(options): options must be an object.');
  }
  // Before any check can quote it: no message ever carries the secret.
  rememberSecret(options.clientSecret, options.clientId);
  const problems = new OptionProblems('createVerificationKit', options.clientSecret);
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
  const now = inWholeMilliseconds(optionalFunction(problems, 'now', options.now)) ?? Date.now;
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
