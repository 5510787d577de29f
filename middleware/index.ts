/**
 * The package's public entry point: re-exports only. What an integrator needs: the factory and
 * its option types, the store contract (the stores are the `./sqlite` and `./postgres` entries), the errors, the start limits, custom pages and texts, the sweep
 * (through the kit: `kit.runSweep`, `kit.startSweepWorker`; or the copyable job `runSweepJob`) and
 * the constants. Everything else is internal (the kit's own tests import it from source).
 */

// The factory and its options.
export { createVerificationKit, type VerificationKit } from './create-kit.ts';
export type {
  BeforeCreateHook,
  DefaultCountryChooser,
  ClientSettings,
  CsrfOptions,
  KitSweepOptions,
  LandingOptions,
  ResolvedUser,
  RoutesOptions,
  VerificationKitOptions,
} from './options/options.ts';
export type { KitLogger, LineWriter } from './logger.ts';
/** One readable line per event on the console: the default in development; pass it to print in production. */
export { createConsoleLogger } from './logger.ts';
export { verifyOptionsFromEnv, VERIFY_ENV, type VerifyEnvOptions } from './options/options-env.ts';

// Guarded actions and the service as the kit sees it.
export type {
  ActionDefinition,
  ActionOrdering,
  CreatedSession,
  CreateSessionInput,
  DestinationSource,
  JsonValue,
  KnownFailureReason,
  LandedAttempt,
  OperationSensitivity,
  OutcomeSource,
  Platform,
  PrepareContext,
  ScopeDefinition,
  SessionStatus,
  VerificationProof,
  VerifiedAttempt,
  VerifyClient,
} from './types.ts';
export { KNOWN_FAILURE_REASONS } from './types.ts';
export {
  createVerifyClient,
  type VerifyClientOptions,
  type VerifyClientRetry,
  type VerifyClientTimeouts,
} from './client/client.ts';

// Step-up for the integrator's own routes.
export type { RecentVerificationOptions } from './step-up/guard-options.ts';
export type { GrantReader, GrantSummary } from './step-up/grants.ts';

// Errors.
export { KitError, KitErrorCode, isKitError, type KitErrorOptions } from './errors.ts';

// What a store implements. The stores themselves are the `./sqlite` and `./postgres` entries, so an
// app loads only the database driver it uses.
export type {
  Attempt,
  AttemptOutcome,
  AttemptQuery,
  AttemptRecord,
  ConsumeStartBudgetsOptions,
  FulfilEffect,
  FulfilRequest,
  FulfilSettlement,
  NewAttempt,
  NextCheck,
  RetentionBatch,
  RetentionResult,
  StartBudget,
  StartBudgetCounter,
  StartBudgetRefusal,
  StepUpGrant,
  StepUpIntent,
  NewStepUpIntent,
  StepUpStore,
  StoredOutcomeEvent,
  VerifyStore,
} from './store/types.ts';
export {
  maskDestination,
  type AttemptReader,
  type AttemptSearch,
  type AttemptSummary,
  type LandedAttemptFlash,
} from './attempts.ts';

// Typed numbers: which numbers are texted, and how they are read.
export {
  DEFAULT_REFUSED_TYPES,
  type DestinationPolicyOptions,
  type RefusalReason,
} from './numbers/destination-policy.ts';
export type { PhoneNumberType } from './numbers/parse-number.ts';

// Start limits.
export {
  createStartLimits,
  type LimitBudget,
  type StartLimits,
  type StartLimitsOptions,
} from './limits/start-limits.ts';

// SMS pumping: the rules on texts never verified, and what operators read and set.
export type { PumpingAllowList, PumpingChallenge, PumpingOptions } from './pumping/pumping-options.ts';
export type { PumpingOperations, PumpingTarget, TrippedKey } from './pumping/pumping-operations.ts';
export type { PumpingDayCount, PumpingDecisionRecord, PumpingRule } from './store/types.ts';
export {
  DEFAULT_THRESHOLDS as DEFAULT_PUMPING_THRESHOLDS,
  type PumpingThresholds,
  type Thresholds as PumpingThreshold,
} from './pumping/pumping-rules.ts';

// The sweep: options, reports, the copyable job.
export { SWEEP_WINDOW_MS, type SweepOptions, type SweepWorkerOptions } from './sweep/sweep-options.ts';
export { DEFAULT_SWEEP_READ_AGES_MS } from './sweep/read-ages.ts';
export type { SweepReport } from './sweep/sweep-report.ts';
export type { SweepWorker } from './sweep/worker.ts';
export {
  runSweepJob,
  SweepJobExitCode,
  type SweepJobEnv,
  type SweepJobKit,
  type SweepJobSettings,
  type SweepJobOptions,
} from './sweep/sweep-job.ts';
export { DEFAULT_RETENTION, type RetentionOptions } from './sweep/retention.ts';

// After-commit outcomes.
export { OUTCOME_RETRY_MS } from './fulfil/outcomes.ts';
export type { OutcomeEvent, OutcomeHook } from './types.ts';
export type { MobileOutcome } from './routes/mobile.ts';

// Custom pages and texts.
export {
  defaultPages,
  PENDING_STATUS_ID,
  restartForm,
  ENTERED_NUMBER_FIELD,
  type EnterNumberPage,
  type ErrorPage,
  type FailedPage,
  type PageRenderers,
  type PendingPage,
  type RestartForm,
  type StartAgainPage,
} from './pages/pages.ts';
export {
  englishMessages,
  errorText,
  failureText,
  type ErrorTextKey,
  type FailureTextKey,
  type KitMessages,
  type KitMessagesInput,
  type LocaleChooser,
} from './pages/messages.ts';
export { escapeHtml, html, SafeHtml } from './pages/html.ts';
