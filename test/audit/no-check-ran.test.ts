/**
 * A run in which no check ran is no pass, from the library as from the command: `report.ok` is
 * false and describeAudit fails one case saying no check ran with each one's reason (the step-up
 * checks chosen for an app without `stepUp`), so an integrator's CI is never green with nothing
 * checked. A run where some ran and others were not run is ok, its cases not run skipped. A run
 * stopped before its checks (no emulator answering) lists each check as not run, never as a
 * failure with a fix to apply, and describeAudit fails every case with the reason it stopped.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  AUDIT_CHECK_IDS,
  auditIntegration,
  describeAudit,
  formatAuditTable,
  type AuditOptions,
} from 'hosted-sms-verify-kit/testing';
import { freePort } from '../support/listen.ts';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

const stepUpIds = AUDIT_CHECK_IDS.filter((id) => id.startsWith('step-up.'));

/** The sample app's options without its guarded routes nor its actions' step-ups. */
async function withoutStepUp(): Promise<AuditOptions> {
  const app = await startSampleApp();
  apps.push(app);
  const actions = app.auditOptions.actions.map(({ requireRecentVerification: _, ...action }) => action);
  return { ...app.auditOptions, stepUp: undefined, actions };
}

type Outcome = [id: string, verdict: 'passed' | 'skipped' | 'failed', said: string];

/**
 * describeAudit's cases as a runner runs them: the before hook, then each case in order, each
 * with a context that can skip it (vitest, node:test) or none (jest).
 */
async function runSuite(options: AuditOptions, only: string[], canSkip: boolean): Promise<Outcome[]> {
  let before: (() => void | Promise<void>) | undefined;
  const cases: [string, (context: { skip?: (note?: string) => void } | undefined) => unknown][] = [];
  describeAudit(
    {
      describe: (_name, body) => body(),
      it: (name, body) => void cases.push([name, body]),
      beforeAll: (body) => void (before = body),
    },
    options,
    { only },
  );
  await before?.();
  const outcomes: Outcome[] = [];
  for (const [id, body] of cases) {
    let skipped: string | undefined;
    const context = canSkip ? { skip: (note?: string) => void (skipped = note ?? '') } : undefined;
    try {
      await body(context);
      outcomes.push(skipped === undefined ? [id, 'passed', ''] : [id, 'skipped', skipped]);
    } catch (error) {
      outcomes.push([id, 'failed', (error as Error).message]);
    }
  }
  return outcomes;
}

describe('a run in which no check ran', () => {
  it('auditIntegration: report.ok is false, every check chosen listed as not run with its reason', async () => {
    const report = await auditIntegration({ ...(await withoutStepUp()), only: stepUpIds });
    expect(report.checks.map((check) => check.status)).toEqual(stepUpIds.map(() => 'not-run'));
    expect(report.ok).toBe(false);
    expect(report.stopped).toBeUndefined();
  }, 60_000);

  it('describeAudit: the first case fails saying no check ran with each one’s reason; the others are skipped with theirs', async () => {
    const outcomes = await runSuite(await withoutStepUp(), stepUpIds, true);
    const [first, ...rest] = outcomes;
    expect(first).toEqual([stepUpIds[0], 'failed', expect.stringMatching(/^no check ran: /)]);
    for (const id of stepUpIds) expect(first?.[2]).toContain(`${id} (`);
    expect(first?.[2]).toContain('give your guarded routes as `stepUp');
    expect(first?.[2]).toContain('no action of `actions` has `requireRecentVerification`');
    expect(rest).toEqual(stepUpIds.slice(1).map((id) => [id, 'skipped', expect.stringMatching(/^not run: /)]));
  }, 60_000);
});

describe('a run where some checks ran and others were not run', () => {
  it('report.ok is true; describeAudit skips the checks not run (or fails them where the runner cannot skip) and passes the rest', async () => {
    const options = await withoutStepUp();
    const only = ['step-up.expired', 'cookie.flags'];
    const report = await auditIntegration({ ...options, only });
    expect(report.checks.map((check) => [check.id, check.status])).toEqual([
      ['cookie.flags', 'pass'],
      ['step-up.expired', 'not-run'],
    ]);
    expect(report.ok).toBe(true);
    expect(await runSuite(options, only, true)).toEqual([
      ['step-up.expired', 'skipped', expect.stringMatching(/^not run: give your guarded routes as `stepUp/)],
      ['cookie.flags', 'passed', ''],
    ]);
    expect(await runSuite(options, only, false)).toEqual([
      ['step-up.expired', 'failed', expect.stringMatching(/^step-up\.expired: not run: give your guarded routes/)],
      ['cookie.flags', 'passed', ''],
    ]);
  }, 90_000);
});

describe('a run stopped before its checks (its emulator does not answer)', () => {
  const only = ['cookie.flags', 'leak.secret', 'limits.burst'];
  async function unreachableEmulator(): Promise<AuditOptions> {
    const app = await startSampleApp();
    apps.push(app);
    return { ...app.auditOptions, emulatorUrl: `http://127.0.0.1:${await freePort()}` };
  }

  it('lists every check as not run with the reason, and its table prints no FAIL line nor a fix', async () => {
    const report = await auditIntegration({ ...(await unreachableEmulator()), only });
    const table = formatAuditTable(report);
    expect(report.ok).toBe(false);
    expect(report.stopped).toMatch(/control API at .* did not answer/);
    expect(
      report.checks.map((check) => check.status),
      table,
    ).toEqual(only.map(() => 'not-run'));
    expect(table).not.toMatch(/FAIL|fix:/);
    expect(table).toMatch(/^0 passed, 0 failed, 3 not run in \d+ ms/m);
    expect(table).toMatch(/^The audit stopped before its checks: the emulator's control API at /m);
  }, 60_000);

  it('describeAudit fails every case with the reason it stopped, even where the runner can skip', async () => {
    const outcomes = await runSuite(await unreachableEmulator(), only, true);
    expect(outcomes).toEqual(
      only.map((id) => [id, 'failed', expect.stringMatching(/the audit stopped before its checks: .*did not answer/)]),
    );
  }, 60_000);
});
