/**
 * Each audit check as a test case of your runner: the audit runs once before the cases, and each
 * case fails with its check's evidence and fix; a check not run (an option it needs was not given)
 * is marked skipped with the reason, or fails with it under `requireEveryCheck` (a CI run whose
 * target gives every option must not lose a check silently). A run in which no check ran fails its
 * first case, saying so with each check's reason: a suite of skipped cases alone would pass. A run
 * stopped before its checks (`report.stopped`) fails every case with the reason.
 *
 *   import { describe, it, beforeAll } from 'vitest';          // or: from 'node:test' (with `before`)
 *   describeAudit({ describe, it, beforeAll }, () => ({ appUrl, emulatorUrl, ... }));
 */
import { AUDIT_CHECK_IDS } from './catalogue.ts';
import { unknownNames } from './option-names.ts';
import type { AuditOptions } from './options.ts';
import { auditIntegration } from './runner.ts';
import { noCheckRan, type AuditReport } from './report.ts';

type Body = () => void | Promise<void>;
/** What vitest and node:test hand a test case: both can mark it skipped, with a reason. */
type CaseContext = { skip?: (note?: string) => void } | undefined;
type CaseBody = (context: CaseContext) => void | Promise<void>;

/** The parts of vitest or node:test the adapter uses: `describe`, `it`, and `beforeAll` (vitest) or `before` (node:test). */
export interface TestRunner {
  describe(name: string, body: Body): unknown;
  it(name: string, body: CaseBody): unknown;
  beforeAll?: (body: Body, timeout?: number) => unknown;
  before?: (body: Body, options?: { timeout?: number }) => unknown;
}

/** How the adapter names and runs the suite. */
export interface DescribeAuditSettings {
  /** The suite's name. */
  name?: string;
  /** Only these checks (ids from AUDIT_CHECK_IDS); default: every check. */
  only?: string[];
  /** The audit's whole run, before the cases (default 240 000 ms). */
  timeoutMs?: number;
  /** A check not run fails with its reason instead of being skipped. */
  requireEveryCheck?: boolean;
}

const SETTING_NAMES = ['name', 'only', 'timeoutMs', 'requireEveryCheck'] as const;

/**
 * The settings' problems, each saying how to write it: a misspelt `requireEveryCheck` would skip a
 * check not run (CI green), `only` as one id declared no case at all.
 */
function settingProblems(settings: DescribeAuditSettings): string[] {
  if (typeof settings !== 'object' || settings === null) return ['pass the settings as an object, or leave them out.'];
  const problems = unknownNames('', settings, SETTING_NAMES, (text) => text, 'a setting of describeAudit');
  const { name, only, timeoutMs, requireEveryCheck } = settings as Record<string, unknown>;
  if (name !== undefined && typeof name !== 'string') problems.push("`name` must be the suite's name.");
  if (only !== undefined && (!Array.isArray(only) || !only.every((id) => typeof id === 'string'))) {
    problems.push("`only` must be a list of check ids (AUDIT_CHECK_IDS), e.g. ['leak.secret'].");
  } else if (only !== undefined) {
    const unknown = checkIds(only).filter((id) => !AUDIT_CHECK_IDS.includes(id));
    if (unknown.length > 0)
      problems.push(`\`only\` names unknown check id(s): ${unknown.join(', ')} (see AUDIT_CHECK_IDS).`);
  }
  if (timeoutMs !== undefined && (!Number.isInteger(timeoutMs) || (timeoutMs as number) < 1)) {
    problems.push("`timeoutMs` must be the whole run's bound in milliseconds, a whole number above 0.");
  }
  if (requireEveryCheck !== undefined && typeof requireEveryCheck !== 'boolean') {
    problems.push('`requireEveryCheck` must be true or false.');
  }
  return problems;
}

/** The ids `only` names, trimmed: a blank one (a list split from a variable ending in a comma) names no case. */
function checkIds(only: readonly string[]): string[] {
  return only.map((id) => id.trim()).filter((id) => id !== '');
}

/** Registers one test case per check (all of them, or `only`); `options` may be a function called when the suite starts. */
export function describeAudit(
  runner: TestRunner,
  options: AuditOptions | (() => AuditOptions | Promise<AuditOptions>),
  settings: DescribeAuditSettings = {},
): void {
  const problems = settingProblems(settings);
  if (problems.length > 0) {
    throw new TypeError(`describeAudit: ${problems.length} problem(s) with the settings:\n- ${problems.join('\n- ')}`);
  }
  const ids = settings.only === undefined ? AUDIT_CHECK_IDS : checkIds(settings.only);
  // An empty list (an unset variable in CI) would declare no case, and the suite would pass.
  if (ids.length === 0) {
    throw new TypeError(
      'describeAudit: `only` names no check: list check ids (AUDIT_CHECK_IDS), or leave it out to run every check.',
    );
  }
  const timeout = settings.timeoutMs ?? 240_000;
  runner.describe(settings.name ?? 'hosted-sms-verify-kit audit', () => {
    let report: Promise<AuditReport> | undefined;
    const run = async () => {
      const given = typeof options === 'function' ? await options() : options;
      return auditIntegration({ ...given, only: [...ids] });
    };
    if (runner.beforeAll !== undefined) runner.beforeAll(() => (report = run()).then(() => undefined), timeout);
    else if (runner.before !== undefined) runner.before(() => (report = run()).then(() => undefined), { timeout });
    else
      throw new TypeError(
        'describeAudit: pass { describe, it, beforeAll } (vitest) or { describe, it, before } (node:test).',
      );
    ids.forEach((id, index) => {
      runner.it(id, async (context) => {
        if (report === undefined) throw new Error('the audit did not run (its before hook failed)');
        judgeCase(await report, id, index === 0, settings, context);
      });
    });
  });
}

/** One case's verdict: throws its check's failure, or skips it with the reason it was not run. */
function judgeCase(
  report: AuditReport,
  id: string,
  first: boolean,
  settings: DescribeAuditSettings,
  context: CaseContext,
): void {
  // A run stopped before its checks checked nothing: every case fails with the reason, never skipped.
  if (report.stopped !== undefined)
    throw new Error(`${id}: not run, the audit stopped before its checks: ${report.stopped}`);
  // Every case skipped would leave the suite green with nothing checked: one case says so.
  const nothingRan = first ? noCheckRan(report) : undefined;
  if (nothingRan !== undefined) throw new Error(nothingRan);
  const result = report.checks.find((check) => check.id === id);
  if (result === undefined) throw new Error(`no result for ${id}`);
  // Shown as skipped with the reason (the option to give), never as passed.
  if (result.status === 'not-run') {
    if (settings.requireEveryCheck === true || typeof context?.skip !== 'function') {
      throw new Error(`${id}: ${result.evidence[0] ?? 'not run'}`);
    }
    context.skip(result.evidence[0]);
    return;
  }
  if (result.status === 'fail') {
    throw new Error(`${id}: ${result.title}\n- ${result.evidence.join('\n- ')}\nfix: ${result.fix}`);
  }
}
