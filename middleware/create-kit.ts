/**
 * The factory: resolves the options, builds the one context (client, start limits) and the
 * router with the routes the options name (routes/kit-router.ts).
 *
 *   const kit = createVerificationKit({ baseUrl, clientId, clientSecret, returnUrl, store, actions, resolveUser });
 *   app.use(session(...));          // express-session, before the kit (CSRF token store)
 *   app.use(kit.router);            // at '/', since the landing answers at the returnUrl's path
 *   // in your form: <input type="hidden" name="_csrf" value="${kit.csrfToken(req)}">
 */
import type { Express, Request, RequestHandler } from 'express';
import { createAttemptReader, type AttemptReader } from './attempts.ts';
import { boundedClient } from './client/bounded-client.ts';
import { createVerifyClient } from './client/client.ts';
import { coalesceStatusReads } from './client/coalesce.ts';
import type { KitContext } from './context.ts';
import { csrfToken } from './routes/csrf.ts';
import { buildRouter } from './routes/kit-router.ts';
import { DEFAULT_IPV6_SUBNET, deriveDestinationKey } from './limits/limit-keys.ts';
import { lateRejectionLogger } from './logger.ts';
import { invalidOptions, isFunction, isRecord } from './options/option-problems.ts';
import type { ResolvedKitOptions, VerificationKitOptions } from './options/options.ts';
import { isVerifyClient, resolveKitOptions } from './options/options-resolve.ts';
import {
  checkIpv6Subnet,
  createStartLimits,
  type StartLimits,
  type StartLimitsOptions,
} from './limits/start-limits.ts';
import { deriveServiceRefKey } from './routes/service-user-ref.ts';
import type { StartBudgetCounter, VerifyStore } from './store/types.ts';
import { runSweep } from './sweep/sweep.ts';
import type { SweepReport } from './sweep/sweep-report.ts';
import type { SweepOptions, SweepWorkerOptions } from './sweep/sweep-options.ts';
import { startSweepWorker, type SweepWorker } from './sweep/worker.ts';
import { boundedStepUp } from './step-up/bounded-step-up.ts';
import { createGrantReader, type GrantReader } from './step-up/grants.ts';
import type { RecentVerificationOptions } from './step-up/guard-options.ts';
import { requireRecentVerification } from './step-up/guard.ts';
import { grantOnLanding, scopeAction } from './step-up/scope-actions.ts';
import type { ActionDefinition } from './types.ts';
import { pumpingOperations, type PumpingOperations } from './pumping/pumping-operations.ts';

/** What createVerificationKit returns. */
export interface VerificationKit<Tx = unknown> {
  /** An Express sub-application; mount it at '/': `app.use(kit.router)`. */
  router: Express;
  /** The CSRF token for the start form's hidden `_csrf` field (needs express-session). */
  csrfToken(req: Request): string;
  /** The store the kit was given. */
  store: VerifyStore<Tx>;
  /** Reads for support screens: attempts by user, outcome and age, or one by sessionId (destination masked). */
  attempts: AttemptReader;
  /**
   * One sweep run over attempts nobody landed, through the same fulfil path as the landing.
   * Rejects only when the store fails; a bad option is a KitError `invalid_options`.
   */
  runSweep(options?: SweepOptions): Promise<SweepReport>;
  /** Runs the sweep on an interval in this process, one run at a time; `stop()` it on shutdown. */
  startSweepWorker(options: SweepWorkerOptions): SweepWorker;
  /**
   * Express middleware for your own routes (step-up): the request passes only when this user
   * verified for `scope`, in this browser session, at most `maxAge` seconds ago (and for the same
   * resource, with `bindTo`). Otherwise a page asks them to confirm it's you (a GET never sends a
   * text), a form is kept and run once after they confirm, and JSON gets 401 `verification_required`.
   */
  requireRecentVerification(options: RecentVerificationOptions): RequestHandler;
  /** Step-up grants: list them for a support screen, revoke them on sign-out or a changed number. */
  grants: GrantReader;
  /**
   * SMS pumping, for an operator's page: what trips now (counts and thresholds), texts sent and
   * verified per country or block and day, the recent decisions; block or release a country, a
   * number block, an address or a user.
   */
  pumping: PumpingOperations;
  /**
   * Where the kit's own client calls the service: its `baseUrl`, as checked (never credentials).
   * Undefined when you passed a ready client. The integration audit compares it with the emulator
   * it was given before it starts anything.
   */
  readonly serviceUrl: string | undefined;
  /** Closes the client the kit built (a client you passed is yours). The store is yours to close. */
  close(): Promise<void>;
}

/** Each kit's context, for the kit's own tests (never exported from the package). */
const contexts = new WeakMap<object, unknown>();

function isContextOf<Tx>(kit: VerificationKit<Tx>, value: unknown): value is KitContext<Tx> {
  return isRecord(value) && value.store === kit.store;
}

/** The context a kit was built with. Internal: tests time-travel a sweep with `{ ...contextOf(kit), now }`. */
export function contextOf<Tx>(kit: VerificationKit<Tx>): KitContext<Tx> {
  const context = contexts.get(kit);
  if (!isContextOf(kit, context)) throw new Error('contextOf: not a kit made by createVerificationKit');
  return context;
}

function isStartLimits(limits: StartLimitsOptions | StartLimits): limits is StartLimits {
  return 'consume' in limits && isFunction(limits.consume);
}

/** The store counts the default limits when it can (both of the kit's stores do): no sniffing of its type. */
function counterOf<Tx>(store: VerifyStore<Tx>): Pick<StartLimitsOptions, 'store'> {
  return isFunction(store.consumeStartBudgets) ? { store: store as StartBudgetCounter } : {};
}

/** The start limits the options ask for: the integrator's, or the default counted by the kit's store. */
function buildStartLimits<Tx>(options: ResolvedKitOptions<Tx>): StartLimits | undefined {
  const { limits, store } = options;
  // No start route, nothing to limit (a kit made only to sweep, or only to land).
  if (options.dangerouslyDisableStartLimits === true || options.routes.start === false) return undefined;
  if (limits !== undefined && isStartLimits(limits)) return limits;
  const counter = counterOf(store);
  try {
    return createStartLimits({
      ...counter,
      destinationKey: deriveDestinationKey(options.clientSecret),
      logger: options.logger,
      // The budgets' windows follow the kit's clock, as every other time the kit keeps.
      now: options.now,
      ...limits,
    });
  } catch (error) {
    const noCounter = counter.store === undefined && limits === undefined;
    const problem = noCounter
      ? 'Start limits need a counter store: use the SQLite or PostgreSQL store, pass ' +
        '`limits: createStartLimits({ store })` with a store that counts start budgets (`consumeStartBudgets`), ' +
        'or (only with equal limits elsewhere) `dangerouslyDisableStartLimits: true`.'
      : `\`limits\`: ${error instanceof Error ? error.message : String(error)}`;
    throw invalidOptions('createVerificationKit', [problem]);
  }
}

/**
 * The prefix an IPv6 client is counted by: the start limits' (`limits.ipv6Subnet`, or what limits
 * of the app's own say), so the SMS pumping rules and an operator's block of an address key a
 * client as its start budget does. Read from the options too when no start route builds limits
 * (a kit made for the sweep job and the fraud command).
 */
function ipv6SubnetOf<Tx>(options: ResolvedKitOptions<Tx>, startLimits: StartLimits | undefined): number {
  const given: unknown = startLimits?.ipv6Subnet ?? options.limits?.ipv6Subnet;
  if (given === undefined) return DEFAULT_IPV6_SUBNET;
  try {
    return checkIpv6Subnet(given);
  } catch (error) {
    throw invalidOptions('createVerificationKit', [`\`limits\`: ${(error as Error).message}`]);
  }
}

/** What the kit's `sweep` options give every run of kit.runSweep and kit.startSweepWorker. */
function kitSweepDefaults<Tx>(context: KitContext<Tx>): Pick<SweepOptions, 'maxReadsPerSecond'> {
  const cap = context.sweep.maxReadsPerSecond;
  return cap === undefined ? {} : { maxReadsPerSecond: cap };
}

/** The actions, and for each step-up scope its action (the one fulfil path; the landing grants). */
function withScopeActions<Tx>(options: ResolvedKitOptions<Tx>): ReadonlyMap<string, ActionDefinition<Tx>> {
  const { stepUp } = options.store;
  if (options.scopes.size === 0 || stepUp === undefined || options.routes.stepUp === false) return options.actions;
  const deps = { now: options.now, stepUpPath: options.routes.stepUp };
  // A scope's start waits on the step-up store no longer than hookTimeouts.store.
  const bounded = boundedStepUp(stepUp, options);
  const scoped = [...options.scopes.values()].map((scope) => [scope.name, scopeAction(scope, bounded, deps)] as const);
  return new Map([...options.actions, ...scoped]);
}

/** The landing's part of step-up: the grant, for the browser session that asked for it. */
function ownLandingOf<Tx>(options: ResolvedKitOptions<Tx>): KitContext<Tx>['onOwnLanding'] {
  const { stepUp } = options.store;
  if (options.scopes.size === 0 || stepUp === undefined || options.routes.stepUp === false) return async () => {};
  return grantOnLanding(options.scopes, boundedStepUp(stepUp, options), { now: options.now, logger: options.logger });
}

/** The context every route and the sweep share, built once. */
function buildContext<Tx>(options: ResolvedKitOptions<Tx>): KitContext<Tx> {
  const { client, limits: _limits, dangerouslyDisableStartLimits: _off, ...rest } = options;
  const startLimits = buildStartLimits(options);
  const verifyClient = isVerifyClient(client)
    ? boundedClient(client, options.hookTimeouts.client, lateRejectionLogger(options.logger))
    : createVerifyClient({
        baseUrl: options.baseUrl,
        clientId: options.clientId,
        clientSecret: options.clientSecret,
        ...client,
      });
  // From the client secret, as the destination limits' key: every instance of the app derives the same.
  const serviceRefKey = deriveServiceRefKey(options.clientSecret);
  // Every status read of the routes and the sweep goes through one coalescing layer per kit.
  const coalesced = coalesceStatusReads(verifyClient, options.landing.pendingReuseMs);
  return {
    ...rest,
    actions: withScopeActions(options),
    client: coalesced,
    startLimits,
    ipv6Subnet: ipv6SubnetOf(options, startLimits),
    serviceRefKey,
    onOwnLanding: ownLandingOf(options),
  };
}

/** Creates the kit: checks every option (one KitError `invalid_options` lists all problems) and builds its router. */
export function createVerificationKit<Tx = unknown>(options: VerificationKitOptions<Tx>): VerificationKit<Tx> {
  const resolved = resolveKitOptions(options);
  const context = buildContext(resolved);
  const ownsClient = !isVerifyClient(resolved.client);
  const kit: VerificationKit<Tx> = {
    router: buildRouter(context),
    csrfToken: (req) => csrfToken(context, req),
    store: context.store,
    attempts: createAttemptReader(context.store, context.now),
    runSweep: (sweepOptions) => runSweep(context, { ...kitSweepDefaults(context), ...sweepOptions }),
    startSweepWorker: (workerOptions) => startSweepWorker(context, { ...kitSweepDefaults(context), ...workerOptions }),
    requireRecentVerification: (guardOptions) => requireRecentVerification(context, guardOptions),
    grants: createGrantReader(context.store.stepUp, context.now, context.scopes, {
      timeoutMs: context.hookTimeouts.store,
      onLateRejection: lateRejectionLogger(context.logger),
    }),
    pumping: pumpingOperations({
      store: context.store.pumping,
      thresholds: context.pumping.thresholds,
      mode: context.pumping.mode,
      ipv6Subnet: context.ipv6Subnet,
      now: context.now,
      timeoutMs: context.hookTimeouts.limits,
      onLateRejection: lateRejectionLogger(context.logger),
    }),
    serviceUrl: ownsClient ? resolved.baseUrl : undefined,
    async close() {
      if (ownsClient) await context.client.close();
    },
  };
  contexts.set(kit, context);
  return kit;
}
