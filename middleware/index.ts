/**
 * The kit's public entry point.
 *
 *   const kit = createVerificationKit({ baseUrl, clientId, clientSecret, returnUrl, store, actions, resolveUser });
 *   app.use(session(...));          // express-session, before the kit (CSRF token store)
 *   app.use(kit.router);            // at '/', since the landing answers at the returnUrl's path
 *   // in your form: <input type="hidden" name="_csrf" value="${kit.csrfToken(req)}">
 */
import express, { type Express, type Request } from 'express';
import { createVerifyClient } from './client.ts';
import { validateOptions, type KitConfig, type VerificationKitOptions } from './config.ts';
import { createAttemptReader, type AttemptReader } from './attempts.ts';
import { csrfToken } from './csrf.ts';
import { KitError, KitErrorCode } from './errors.ts';
import type { FulfilDeps } from './fulfil.ts';
import { mountLanding } from './landing.ts';
import { mountMobile } from './mobile.ts';
import { answerError } from './respond.ts';
import { mountStart } from './start.ts';
import type { VerifyStore } from './store/types.ts';
import type { VerifyClient } from './types.ts';

export interface VerificationKit<Tx = unknown> {
  /** An Express sub-application; mount it at '/': `app.use(kit.router)`. */
  router: Express;
  /** The CSRF token for the start form's hidden `_csrf` field (needs express-session). */
  csrfToken(req: Request): string;
  /** What the sweep needs to run the one fulfil path (client, store, actions, clock). */
  fulfilDeps: FulfilDeps<Tx>;
  client: VerifyClient;
  store: VerifyStore<Tx>;
  /** Reads for support screens: attempts by user, outcome and age, or one by sessionId (destination masked). */
  attempts: AttemptReader;
  /** Closes the client's connection pool (and a client the kit created). The store is yours to close. */
  close(): Promise<void>;
}

function mountedAtWrongPath<Tx>(config: KitConfig<Tx>, where: string): KitError {
  const landing =
    config.landingPath === null ? '' : ` since the landing must answer at the returnUrl's path "${config.landingPath}"`;
  return new KitError(
    KitErrorCode.MountedAtWrongPath,
    `The verification kit's router is mounted at "${where}": mount it at '/' with app.use(kit.router)${landing}.`,
  );
}

export function createVerificationKit<Tx = unknown>(options: VerificationKitOptions<Tx>): VerificationKit<Tx> {
  const config = validateOptions(options);
  const ownsClient = config.client === undefined;
  const client =
    config.client ??
    createVerifyClient({
      baseUrl: config.baseUrl,
      clientId: config.clientId,
      clientSecret: config.clientSecret,
      ...(config.clientTimeouts === undefined ? {} : { timeouts: config.clientTimeouts }),
      ...(config.clientRetry === undefined ? {} : { retry: config.clientRetry }),
    });
  const fulfilDeps: FulfilDeps<Tx> = {
    client,
    store: config.store,
    actions: config.actions,
    now: config.now,
    platform: config.platform,
    logger: config.logger,
    ...(config.onOutcome === undefined ? {} : { onOutcome: config.onOutcome }),
  };

  const router = express();
  router.disable('x-powered-by');
  router.set('case sensitive routing', true);
  router.set('strict routing', true);

  // Startup detection: app.use('/prefix', kit.router) throws here, at the app.use call.
  router.on('mount', () => {
    const at = router.mountpath;
    if (at !== '/') throw mountedAtWrongPath(config, Array.isArray(at) ? at.join(', ') : String(at));
  });
  // First-request detection: the router reached below a prefix (e.g. inside a mounted sub-app).
  router.use((req, res, next) => {
    if (req.baseUrl === '') {
      next();
      return;
    }
    answerError(config, 'mount', 'html', mountedAtWrongPath(config, req.baseUrl), res, next);
  });

  if (config.routes.start) mountStart(router, config, client);
  if (config.routes.landing) mountLanding(router, config, fulfilDeps);
  if (config.routes.mobile) mountMobile(router, config, fulfilDeps);

  return {
    router,
    csrfToken: (req) => csrfToken(config, req),
    fulfilDeps,
    client,
    store: config.store,
    attempts: createAttemptReader(config.store, config.now),
    async close() {
      if (ownsClient) await client.close();
    },
  };
}

export { maskDestination, type AttemptReader, type AttemptSearch, type AttemptSummary } from './attempts.ts';
export { DEFAULT_RETENTION, type RetentionOptions } from './retention.ts';
export { createSqliteStore, type SqliteStore, type SqliteStoreOptions } from './store/sqlite.ts';
export { createPostgresStore, type PostgresStore, type PostgresStoreOptions } from './store/postgres.ts';
export {
  createVerifyClient,
  type VerifyClientOptions,
  type VerifyClientRetry,
  type VerifyClientTimeouts,
} from './client.ts';
export { KitError, KitErrorCode, isKitError, type KitErrorOptions } from './errors.ts';
export {
  runSweep,
  SWEEP_WINDOW_MS,
  DEFAULT_SWEEP_BACKOFF_MS,
  type SweepDeps,
  type SweepOptions,
  type SweepReport,
} from './sweep.ts';
export { startSweepWorker, type SweepWorker, type SweepWorkerOptions } from './worker.ts';
export { runSweepJob, SweepJobExitCode, type SweepJobDeps, type SweepJobOptions } from './sweep-cli.ts';
export { createStartLimits, type LimitBudget, type StartLimits, type StartLimitsOptions } from './rate-limit.ts';
export { completeAttempt, findReturnedAttempt, type Completion, type FulfilDeps } from './fulfil.ts';
export {
  deliverOutcomeEvents,
  OUTCOME_RETRY_MS,
  type OutcomeEvent,
  type OutcomeHook,
  type OutcomeLogger,
} from './outcomes.ts';
export type {
  BeforeCreateHook,
  CsrfOptions,
  KitLogger,
  LandingOptions,
  ResolvedUser,
  VerificationKitOptions,
} from './config.ts';
export type { ErrorPage, FailedPage, PageRenderers, PendingPage, RestartForm, StartAgainPage } from './pages.ts';
export { defaultPages, layout, restartForm, pendingScript, PENDING_STATUS_ID } from './pages.ts';
export {
  englishMessages,
  errorText,
  failureText,
  type ErrorTextKey,
  type FailureTextKey,
  type KitMessages,
  type KitMessagesInput,
  type LocaleChooser,
} from './messages.ts';
export { escapeHtml, html, SafeHtml } from './html.ts';
export type { MobileOutcome } from './mobile.ts';
export type {
  Attempt,
  AttemptOutcome,
  AttemptQuery,
  AttemptRecord,
  ConsumeStartBudgetsOptions,
  FulfilEffect,
  NewAttempt,
  RetentionBatch,
  RetentionResult,
  StartBudget,
  StartBudgetCounter,
  StartBudgetRefusal,
  StoredOutcomeEvent,
  VerifyStore,
} from './store/types.ts';
export type * from './types.ts';
export { KNOWN_FAILURE_REASONS } from './types.ts';
