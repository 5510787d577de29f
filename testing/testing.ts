/**
 * `hosted-sms-verify-kit/testing`: the emulator of the hosted SMS verification service, as a test
 * double for your own suites. It enforces the spec's rules (byte-for-byte returnUrl, single-use
 * 120 s handoffs, idempotency keys, Basic auth) and is driven through typed control calls.
 *
 *   const clock = createTestClock();     // shared: createVerificationKit({ now: clock.now, ... }), the audit's sweep
 *   const emulator = await startEmulator({ port: 0, clients: [{ clientId, secret, returnUrl }], clock, log: () => {} });
 *   // ...your app starts a verification against emulator.url...
 *   const code = await emulator.control.latestCode({ destination: '+15550100001' });
 *   await emulator.control.completeSession(sessionId, 'failed', 'otp_locked');
 *   await emulator.close();
 *
 * Starting an emulator needs `helmet` and `@simplewebauthn/server` (devDependencies of your app).
 */
export { startEmulator, DEFAULT_CLIENT } from '../emulator/index.ts';
export type { EmulatorClient, EmulatorOptions, Platform, RunningEmulator } from '../emulator/index.ts';
export {
  emulatorControl,
  EmulatorControlError,
  type EmulatorControlOptions,
} from '../emulator/control/control-client.ts';
export type {
  CodeQuery,
  EmulatorControl,
  FailureReason,
  FaultSettings,
  SmsMessage,
  Stats,
} from '../emulator/control/control-client.ts';
export type { ControlSession } from '../emulator/control/control-client.ts';
// The integration audit: attacks your own app, wired to the emulator, and reports per check.
export { auditIntegration } from './audit/runner.ts';
export { describeAudit, type DescribeAuditSettings, type TestRunner } from './audit/adapter.ts';
export { AUDIT_CHECK_IDS } from './audit/catalogue.ts';
export { AuditAgent, type Answer as AuditAnswer } from './audit/agent.ts';
export {
  type AuditAction,
  type AuditGuardedRoute,
  type AuditOptions,
  type EffectProbe,
  type SignInForm,
  type SignInFunction,
} from './audit/options.ts';
export {
  failedIds,
  formatAuditJson,
  formatAuditTable,
  notRunIds,
  type AuditReport,
  type CheckResult,
} from './audit/report.ts';
export { createTestClock, type TestClock } from '../emulator/clock.ts';
export { createTestBrowser, type SubmitOptions, type TestBrowser, type TestPage } from './test-browser.ts';
export { walkHostedPage, type HostedPageResult, type WalkOptions } from './hosted-walk.ts';
export { verifyStepUp, type StepUpOptions, type StepUpResult } from './step-up.ts';
export { verifyEnteredNumber, type EnteredNumberOptions, type EnteredNumberResult } from './entered-number.ts';
export { startAppAndEmulator, type AppAndEmulator, type AppAndEmulatorOptions } from './app-and-emulator.ts';
