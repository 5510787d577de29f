/**
 * csrf.methods fails an app with a method override on the start path read from the query
 * (`GET /verify/start?_method=POST&action=…&_csrf=…` is treated as the form's POST, "for clients
 * that cannot send POST", as method-override's `methodOverride('_method')` reads the query): a GET
 * link starts a verification and texts.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { AuditAgent, auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type CustomFlaw, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
});

const queryOverride: CustomFlaw = {
  before: (app) => {
    // "Clients that cannot POST say so in the query": the override turns the GET into the form's POST.
    app.get('/verify/start', (req, _res, next) => {
      if (req.query._method === 'POST') {
        req.method = 'POST';
        req.body = { ...req.query };
      }
      next();
    });
  },
};

describe('a method override on the start path read from the query', () => {
  it('fails csrf.methods', async () => {
    const app = await startSampleApp(queryOverride);
    apps.push(app);
    // The flaw is real: a GET of the start path with the override starts a verification.
    const agent = new AuditAgent(app.url, () => {});
    const { csrf } = JSON.parse((await agent.postForm('/login', { user: 'getoverride' })).body) as { csrf: string };
    const before = await app.emulator.control.stats();
    const answer = await agent.request(
      `/verify/start?${new URLSearchParams({ _method: 'POST', action: 'grant', _csrf: csrf }).toString()}`,
      { headers: { origin: app.url, 'sec-fetch-site': 'same-origin' } },
    );
    expect(answer.body).toContain('name="hx"');
    expect((await app.emulator.control.stats()).creates).toBe(before.creates + 1);

    const report = await auditIntegration({ ...app.auditOptions, only: ['csrf.methods'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual(['csrf.methods']);
  }, 120_000);
});
