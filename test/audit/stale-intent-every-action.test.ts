/**
 * An action the kit applies for every verified attempt (`ordering: 'independent'`) applies an
 * older attempt landing after a newer one: for a changed phone number, the older number wins.
 * stale-intent landed the first action of `actions` only, and passed an app whose change_phone is
 * independent. An action the audit is told is independent (`ordering`) is said to be so, not failed.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

describe('an app whose change_phone has ordering independent', () => {
  it('fails stale-intent, naming the action', async () => {
    const app = await startSampleApp({ independent: ['change_phone'] });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['stale-intent'] });
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toEqual(['stale-intent']);
    expect(table).toMatch(/change_phone: the older attempt ran 1 time\(s\) after the newer one/);
  }, 120_000);

  it("passes when the audit is told the action's ordering, saying it was not landed out of order", async () => {
    const app = await startSampleApp({ independent: ['change_phone'] });
    apps.push(app);
    const actions = app.auditOptions.actions.map((action) =>
      action.name === 'change_phone' ? { ...action, ordering: 'independent' as const } : action,
    );
    const report = await auditIntegration({ ...app.auditOptions, actions, only: ['stale-intent'] });
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toEqual([]);
    const check = report.checks.find((c) => c.id === 'stale-intent');
    expect(check?.status, table).toBe('pass');
    expect(check?.evidence.join('\n')).toMatch(/change_phone: ordering 'independent'/);
    expect(check?.evidence.join('\n')).toMatch(/close_account: newer: /);
  }, 120_000);
  it('is not run when every action is independent, and an ordering the kit has not is refused', async () => {
    const app = await startSampleApp();
    apps.push(app);
    const independent = app.auditOptions.actions.map((action) => ({ ...action, ordering: 'independent' as const }));
    const report = await auditIntegration({ ...app.auditOptions, actions: independent, only: ['stale-intent'] });
    const check = report.checks.find((c) => c.id === 'stale-intent');
    expect(check?.status).toBe('not-run');
    expect(check?.evidence[0]).toMatch(/every action of `actions` has ordering 'independent'/);
    const newest = [{ name: 'grant', ordering: 'newest' as 'latest' }];
    await expect(auditIntegration({ ...app.auditOptions, actions: newest })).rejects.toThrow(
      "`actions[0].ordering` must be 'latest' or 'independent'",
    );
  }, 120_000);
});
