/**
 * limits.forwarded-ip proves the per-IP start limit binds a client that claims a new address with
 * every start. A 429 does not say which budget refused it, so each start is its own user's first,
 * to its own number: an app trusting every X-Forwarded-For (`trust proxy: true`) fails even when
 * its per-number budget (3 texts per 10 minutes) or its per-user one (3 an hour) is small enough
 * to refuse a fourth start by one user.
 */
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { startIntegratorApp, type IntegratorChoices } from './integrator-app.ts';

const apps: { close: () => Promise<void> }[] = [];
afterAll(async () => {
  for (const app of apps) await app.close();
});

/** The check alone, on an app with `trust proxy: true` (req.ip is whatever X-Forwarded-For says first). */
async function trustingApp(limits: IntegratorChoices['limits']) {
  const app = await startIntegratorApp({ trustProxy: true, ...(limits === undefined ? {} : { limits }) });
  apps.push(app);
  return auditIntegration({ ...app.auditOptions, only: ['limits.forwarded-ip'] });
}

describe('limits.forwarded-ip with trust proxy true', () => {
  it('fails it with the default budgets (control: the check works there)', async () => {
    const report = await trustingApp(undefined);
    expect(failedIds(report), formatAuditTable(report)).toEqual(['limits.forwarded-ip']);
  }, 120_000);

  it.each([
    ['per-destination budget is 3 texts per 10 minutes', { perDestination: { points: 3, durationSeconds: 600 } }],
    ['per-user budget is 3 starts an hour', { perUser: { points: 3, durationSeconds: 3600 } }],
  ])(
    'fails it too when the %s',
    async (_budget, limits) => {
      const report = await trustingApp(limits);
      const evidence = report.checks.flatMap((check) => check.evidence).join('\n');
      expect(failedIds(report), `${formatAuditTable(report)}\n${evidence}`).toEqual(['limits.forwarded-ip']);
    },
    120_000,
  );
});
