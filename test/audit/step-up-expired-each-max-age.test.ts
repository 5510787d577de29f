/**
 * `step-up.expired` judges each guarded route just past its own `maxAge`, shortest first: an app
 * whose POST /payees (its policy: maxAge 300 s) stays open for 600 s after a verification (a
 * session-wide "verified" timestamp of 10 minutes) fails it, whatever longer routes are listed
 * beside it. A single move past the longest maxAge (601 s, /account's) would never try the 300 s
 * route at 301 s.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from '../audit/sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

describe('step-up.expired and routes of different maxAge', () => {
  it('fails a 300 s route that stays open for 600 s even when a 600 s route is listed too', async () => {
    const control = await startSampleApp('sudoMode');
    const app = await startSampleApp('sudoMode');
    apps.push(control, app);
    const only = ['step-up.expired'];
    const payees = control.auditOptions.stepUp!.find((r) => r.scope === 'add_payee')!;
    // Control: the flaw is detectable. With /payees alone, the clock moves 301 s and it opens.
    const alone = await auditIntegration({ ...control.auditOptions, stepUp: [payees], only });
    expect(failedIds(alone), formatAuditTable(alone)).toEqual(['step-up.expired']);
    // The same flaw with /account (maxAge 600) listed too: /payees is tried at 301 s all the same.
    const both = await auditIntegration({ ...app.auditOptions, only });
    expect(failedIds(both), formatAuditTable(both)).toEqual(['step-up.expired']);
  }, 180_000);
});
