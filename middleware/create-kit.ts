/**
 * The factory: resolves the options, builds the one context (client, start limits) and the
 * router with the routes the options name.
 *
 *   const kit = createVerificationKit({ baseUrl, clientId, clientSecret, returnUrl, store, actions, resolveUser });
 *   app.use(session(...));          // express-session, before the kit (CSRF token store)
 *   app.use(kit.router);            // at '/', since the landing answers at the returnUrl's path
 *   // in your form: <input type="hidden" name="_csrf" value="${kit.csrfToken(req)}">
 */
import type { Database } from 'better-sqlite3';
import express, { type Express, type Request } from 'express';
import { createAttemptReader, type AttemptReader } from './attempts.ts';
import { createVerifyClient } from './client.ts';
import type { KitContext } from './context.ts';
import { csrfToken } from './csrf.ts';
import { KitError, KitErrorCode } from './errors.ts';
import { deriveDestinationKey } from './limit-keys.ts';
import { mountLanding } from './landing.ts';
import { mountMobile } from './mobile.ts';
import { invalidOptions, isFunction, isRecord } from './option-problems.ts';
import type { ResolvedKitOptions, VerificationKitOptions } from './options.ts';
import { isVerifyClient, resolveKitOptions } from './options-resolve.ts';
import { createStartLimits, type StartLimits, type StartLimitsOptions } from './rate-limit.ts';
import { answerError } from './respond.ts';
import { mountStart } from './start.ts';
import type { PostgresStore } from './store/postgres.ts';
import type { VerifyStore } from './store/types.ts';
import type { VerifyClient } from './types.ts';

export interface VerificationKit<Tx = unknown> {
  /** An Express sub-application; mount it at '/': `app.use(kit.router)`. */
  router: Express;
  /** The CSRF token for the start form's hidden `_csrf` field (needs express-session). */
  csrfToken(req: Request): string;
  /** What the sweep needs to run the one fulfil path (client, store, actions, clock). */
  fulfilDeps: KitContext<Tx>;
  client: VerifyClient;
  store: VerifyStore<Tx>;
  /** Reads for support screens: attempts by user, outcome and age, or one by sessionId (destination masked). */
  attempts: AttemptReader;
  /** Closes the client's connection pool (and a client the kit created). The store is yours to close. */
  close(): Promise<void>;
}

function mountedAtWrongPath(landingPath: string | false, where: string): KitError {
  const landing =
    landingPath === false ? '' : ` since the landing must answer at the returnUrl's path "${landingPath}"`;
  return new KitError(
    KitErrorCode.MountedAtWrongPath,
    `The verification kit's router is mounted at "${where}": mount it at '/' with app.use(kit.router)${landing}.`,
  );
}

function isStartLimits(limits: StartLimitsOptions | StartLimits): limits is StartLimits {
  return 'consume' in limits && isFunction(limits.consume);
}

function isPostgresStore<Tx>(store: VerifyStore<Tx>): store is VerifyStore<Tx> & PostgresStore {
  return 'kind' in store && store.kind === 'postgres';
}

function isSqliteStore<Tx>(store: VerifyStore<Tx>): store is VerifyStore<Tx> & { db: Database } {
  return 'db' in store && isRecord(store.db) && isFunction(store.db.prepare);
}

/** Where the default limits keep their counters: the kit store's own database. */
function counterStoreOf<Tx>(store: VerifyStore<Tx>): Pick<StartLimitsOptions, 'database' | 'postgres'> {
  // Several instances share one PostgreSQL store, so they share its counters too.
  if (isPostgresStore(store)) return { postgres: store };
  if (isSqliteStore(store)) return { database: store.db };
  return {};
}

/** The start limits the options ask for: the integrator's, or the default on the store's database. */
function buildStartLimits<Tx>(options: ResolvedKitOptions<Tx>): StartLimits | undefined {
  const { limits, store } = options;
  if (options.dangerouslyDisableStartLimits === true) return undefined;
  if (limits !== undefined && isStartLimits(limits)) return limits;
  const counters = counterStoreOf(store);
  try {
    return createStartLimits({
      ...counters,
      destinationKey: deriveDestinationKey(options.clientSecret),
      logger: options.logger,
      ...limits,
    });
  } catch (error) {
    const noCounters = counters.database === undefined && counters.postgres === undefined && limits === undefined;
    const problem = noCounters
      ? 'Start limits need a counter store: use the SQLite or PostgreSQL store, pass ' +
        '`limits: createStartLimits({ limiters })` on a shared store, or (only with equal limits elsewhere) ' +
        '`dangerouslyDisableStartLimits: true`.'
      : `\`limits\`: ${error instanceof Error ? error.message : String(error)}`;
    throw invalidOptions('createVerificationKit', [problem]);
  }
}

/** The context every route and the sweep share, built once. */
function buildContext<Tx>(options: ResolvedKitOptions<Tx>): KitContext<Tx> {
  const { client, limits: _limits, dangerouslyDisableStartLimits: _off, ...rest } = options;
  const startLimits = buildStartLimits(options);
  const verifyClient = isVerifyClient(client)
    ? client
    : createVerifyClient({
        baseUrl: options.baseUrl,
        clientId: options.clientId,
        clientSecret: options.clientSecret,
        ...client,
      });
  return { ...rest, client: verifyClient, startLimits };
}

function buildRouter<Tx>(context: KitContext<Tx>): Express {
  const router = express();
  router.disable('x-powered-by');
  router.set('case sensitive routing', true);
  router.set('strict routing', true);
  const { routes } = context;

  // Startup detection: app.use('/prefix', kit.router) throws here, at the app.use call.
  router.on('mount', () => {
    const at = router.mountpath;
    if (at !== '/') throw mountedAtWrongPath(routes.landing, Array.isArray(at) ? at.join(', ') : String(at));
  });
  // First-request detection: the router reached below a prefix (e.g. inside a mounted sub-app).
  router.use((req, res, next) => {
    if (req.baseUrl === '') {
      next();
      return;
    }
    answerError(context, 'mount', 'html', mountedAtWrongPath(routes.landing, req.baseUrl), res, next);
  });

  if (routes.start !== false) mountStart(router, context, routes.start);
  if (routes.landing !== false) mountLanding(router, context, routes.landing);
  if (routes.mobileComplete !== false) mountMobile(router, context, routes.mobileComplete);
  return router;
}

/** Creates the kit: checks every option (one KitError `invalid_options` lists all problems) and builds its router. */
export function createVerificationKit<Tx = unknown>(options: VerificationKitOptions<Tx>): VerificationKit<Tx> {
  const resolved = resolveKitOptions(options);
  const context = buildContext(resolved);
  const ownsClient = !isVerifyClient(resolved.client);
  return {
    router: buildRouter(context),
    csrfToken: (req) => csrfToken(context, req),
    fulfilDeps: context,
    client: context.client,
    store: context.store,
    attempts: createAttemptReader(context.store, context.now),
    async close() {
      if (ownsClient) await context.client.close();
    },
  };
}
