/**
 * An app given to the audit as http://0.0.0.0:<port> (the address a server says it listens on) or
 * at an IPv4-mapped IPv6 address (http://[::ffff:127.0.0.1]:<port>) is one the kit serves over plain
 * http only at a loopback name: its landing is at another origin than the one the audit's browsers
 * start at, and every browser would connect from one client address. The run stops before any
 * start, saying to give `appUrl` as http://localhost:<port>, as for [::1].
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

describe.each(['0.0.0.0', '[::ffff:127.0.0.1]'])('an app given at %s', (host) => {
  it('stops before any start, saying to give appUrl as http://localhost:<port>; no check fails', async () => {
    const app = await startSampleApp();
    apps.push(app);
    const port = new URL(app.auditOptions.appUrl).port;
    const report = await auditIntegration({ ...app.auditOptions, appUrl: `http://${host}:${port}` });
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toEqual([]);
    expect(report.ok).toBe(false);
    expect(report.stopped, table).toMatch(/give `appUrl` as http:\/\/localhost:<port>/);
    expect((await app.emulator.control.stats()).creates).toBe(0);
  }, 120_000);
});
