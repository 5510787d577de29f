/** The package's entry point: re-exports only. The factory lives in create-kit.ts. */
export { createVerificationKit, type VerificationKit } from './create-kit.ts';
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
export { runSweep, type SweepDeps, type SweepReport } from './sweep.ts';
export {
  SWEEP_WINDOW_MS,
  DEFAULT_SWEEP_BACKOFF_MS,
  type SweepOptions,
  type SweepWorkerOptions,
} from './sweep-options.ts';
export { startSweepWorker, type SweepWorker } from './worker.ts';
export { runSweepJob, SweepJobExitCode, type SweepJobDeps, type SweepJobOptions } from './sweep-cli.ts';
export { createStartLimits, type LimitBudget, type StartLimits, type StartLimitsOptions } from './rate-limit.ts';
export { completeAttempt, findReturnedAttempt, type Completion, type FulfilDeps } from './fulfil.ts';
export { deliverOutcomeEvents, OUTCOME_RETRY_MS, type OutcomeEvent, type OutcomeHook } from './outcomes.ts';
export type {
  BeforeCreateHook,
  ClientSettings,
  CsrfOptions,
  KitSweepOptions,
  LandingOptions,
  ResolvedUser,
  RoutesOptions,
  VerificationKitOptions,
} from './options.ts';
export type { KitLogger } from './logger.ts';
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
  FulfilEffect,
  FulfilRequest,
  FulfilSettlement,
  NewAttempt,
  NextCheck,
  RetentionBatch,
  RetentionResult,
  StoredOutcomeEvent,
  VerifyStore,
} from './store/types.ts';
export type * from './types.ts';
export { KNOWN_FAILURE_REASONS } from './types.ts';
