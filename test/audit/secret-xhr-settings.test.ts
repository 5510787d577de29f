/**
 * leak.secret searches the URLs a page's scripts request: a success page whose script loads the
 * app's settings (the client secret among them) with XMLHttpRequest (`xhr.open('GET',
 * '/api/settings')`, what axios and jQuery do underneath) fails it, as the same page with fetch() does.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

/** The sample app whose success page's script loads /api/settings (the client's settings, its secret among them) by `request`. */
async function appLoadingSettings(request: string): Promise<SampleApp> {
  const app = await startSampleApp({
    before: (server, ctx) => {
      server.get('/api/settings', (_req, res) => {
        res.json({ clientId: ctx.clientId, clientSecret: ctx.clientSecret, theme: 'light' });
      });
    },
    done: (_req, res) => {
      res.setHeader('Cache-Control', 'no-store');
      res.send(`<!doctype html><title>Done</title><p>Done.</p><script>${request}</script>`);
      return true;
    },
  });
  apps.push(app);
  return app;
}

describe('leak.secret reads what a page requests by script', () => {
  it('fails a success page whose script fetch()es settings holding the secret (control)', async () => {
    const app = await appLoadingSettings("fetch('/api/settings').then((r) => r.json()).then(applyTheme);");
    const report = await auditIntegration({ ...app.auditOptions, only: ['leak.secret'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual(['leak.secret']);
  }, 120_000);

  it('fails the same page requesting them with XMLHttpRequest', async () => {
    const app = await appLoadingSettings(
      "var xhr = new XMLHttpRequest(); xhr.open('GET', '/api/settings'); xhr.onload = function () { applyTheme(JSON.parse(xhr.responseText)); }; xhr.send();",
    );
    const report = await auditIntegration({ ...app.auditOptions, only: ['leak.secret'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual(['leak.secret']);
  }, 120_000);
});
