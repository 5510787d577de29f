/**
 * An app at the IPv6 loopback address ([::1]) has one address for every browser of the audit:
 * loopback there is ::1 alone. Its per-IP start limit refused the run halfway (429), and a dozen
 * checks of a sound app failed, the evidence calling the app "not on loopback". The run stops
 * before any start instead, saying how to serve the app so each browser has its own address.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

describe('an app at [::1]', () => {
  it('stops before any start, saying to serve the app on 127.0.0.1; no check fails', async () => {
    const app = await startSampleApp({ appHost: '[::1]' });
    apps.push(app);
    expect(app.auditOptions.appUrl).toMatch(/^http:\/\/\[::1\]:\d+$/);
    const report = await auditIntegration(app.auditOptions);
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toEqual([]);
    expect(report.ok).toBe(false);
    expect(report.stopped, table).toMatch(
      /^your app is at \[::1\], where every browser of the audit would connect from ::1 .* listen on 127\.0\.0\.1/,
    );
    expect((await app.emulator.control.stats()).creates).toBe(0);
  }, 120_000);
});
