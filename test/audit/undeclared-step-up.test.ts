/**
 * An action whose start requires a step-up in the kit, given to the audit without its
 * `requireRecentVerification`, is started without the grant it needs: the check that started it
 * says so and how to describe the action, not only that the start answered 200.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

describe('close_account given without its requireRecentVerification', () => {
  it("landing.pages fails naming the step-up's page and the option to give", async () => {
    const app = await startSampleApp();
    apps.push(app);
    const report = await auditIntegration({
      ...app.auditOptions,
      actions: [{ name: 'grant' }, { name: 'close_account' }],
      only: ['landing.pages'],
    });
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toEqual(['landing.pages']);
    expect(table).toMatch(
      /the start answered the step-up's "Confirm it's you" page: give the action `requireRecentVerification: \{ scope, maxAge \}` in `actions`/,
    );
  }, 120_000);
});
