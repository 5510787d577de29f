/**
 * An app whose close_account effect is written outside fulfil() (on its own success page) never
 * runs it for a user who verified and never came back: the sweep fulfils through the kit, and the
 * kit's fulfil writes nothing. sweep.never-returns swept an attempt of the first action of
 * `actions` only, and passed such an app.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

describe('an app whose close_account fulfil writes no effect', () => {
  it('fails sweep.never-returns, naming the action', async () => {
    const app = await startSampleApp({ noFulfilEffectFor: ['close_account'] });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['sweep.never-returns'] });
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toEqual(['sweep.never-returns']);
    expect(table).toMatch(/close_account: the sweep ran the action 0 times/);
  }, 120_000);
});
