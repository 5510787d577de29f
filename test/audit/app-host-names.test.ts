/**
 * An app the audit reaches by a `*.localhost` name (`app.localhost`, as browsers resolve it to
 * loopback) is on loopback too: each browser of the audit connects from its own 127.x.y.z address,
 * so the app's per-IP start budget is never spent by the whole run from one address. Such an app was
 * taken for one elsewhere, every browser connected from 127.0.0.1, and a sound app's starts met its
 * per-IP limit (429) halfway through the run, failing the checks that came after.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

describe('an app at a *.localhost name', () => {
  it('app.localhost: every browser connects from its own loopback address, and every check passes', async () => {
    const app = await startSampleApp({ appHost: 'app.localhost' });
    apps.push(app);
    expect(app.auditOptions.appUrl).toMatch(/^http:\/\/app\.localhost:\d+$/);
    const report = await auditIntegration(app.auditOptions);
    const table = formatAuditTable(report);
    expect(report.stopped, table).toBeUndefined();
    expect(failedIds(report), table).toEqual([]);
    const burst = report.checks.find((check) => check.id === 'limits.burst');
    expect(burst?.evidence, table).toContainEqual(
      expect.stringMatching(/^each browser of the audit connects from its own address in 127\.\d+\.0\.0\/16/),
    );
  }, 120_000);
});
