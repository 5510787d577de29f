/** Every check of the audit, in report order. Ids are stable: CI and the test adapters name them. */
import type { AuditCheck } from './check.ts';
import { enteredChecks } from './checks-entered.ts';
import { exposureChecks } from './checks-exposure.ts';
import { fixationChecks } from './checks-fixation.ts';
import { forgedChecks } from './checks-forged.ts';
import { pageChecks } from './checks-pages.ts';
import { redirectChecks } from './checks-redirect.ts';
import { replayChecks } from './checks-replay.ts';
import { sessionChecks } from './checks-session.ts';
import { startChecks } from './checks-start.ts';
import { stepUpChecks } from './checks-step-up.ts';
import { stepUpStartChecks } from './checks-step-up-start.ts';

export const AUDIT_CHECKS: readonly AuditCheck[] = [
  ...forgedChecks,
  ...replayChecks,
  ...pageChecks,
  ...redirectChecks,
  ...startChecks,
  ...sessionChecks,
  ...fixationChecks,
  ...stepUpChecks,
  ...stepUpStartChecks,
  ...enteredChecks,
  ...exposureChecks,
];

/** The ids of every check, in report order. */
export const AUDIT_CHECK_IDS: readonly string[] = AUDIT_CHECKS.map((check) => check.id);
