/**
 * csrf.foreign-origin fails an app that takes a start from any subdomain of its host (a middleware
 * maps an Origin under `.localhost` to the app's own, "our www. pages carry the verify button"): a
 * form on `http://evil.localhost:<port>` (a taken-over subdomain, user content) starts a
 * verification with the user's token. The check sends a sibling subdomain's Origin too, and an
 * origin starting with the app's host name that parses with a port.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { AuditAgent, auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type CustomFlaw, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

const trustsSubdomains: CustomFlaw = {
  before: (app, ctx) => {
    app.use('/verify/start', (req, _res, next) => {
      const origin = req.headers.origin;
      let host: string | undefined;
      try {
        host = origin === undefined ? undefined : new URL(origin).hostname;
      } catch {
        host = undefined;
      }
      // "Our own subdomains are us": the kit only knows the returnUrl's origin.
      if (host !== undefined && host.endsWith(`.${new URL(ctx.url).hostname}`)) req.headers.origin = ctx.url;
      next();
    });
  },
};

describe('a start accepted from any subdomain of the app', () => {
  it('fails csrf.foreign-origin', async () => {
    const app = await startSampleApp(trustsSubdomains);
    apps.push(app);
    // The flaw is real: a form on a subdomain, with the user's token, starts a verification.
    const agent = new AuditAgent(app.url, () => {});
    const { csrf } = JSON.parse((await agent.postForm('/login', { user: `sub${Date.now()}` })).body) as {
      csrf: string;
    };
    const sibling = `http://evil.localhost:${new URL(app.url).port}`;
    const start = await agent.postForm(
      '/verify/start',
      { _csrf: csrf, action: 'grant' },
      { origin: sibling, 'sec-fetch-site': 'same-site' },
    );
    expect(start.body, 'the subdomain start was handed off').toMatch(/name="hx" value="[^"]+"/);
    const report = await auditIntegration({ ...app.auditOptions, only: ['csrf.foreign-origin'] });
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toContain('csrf.foreign-origin');
  }, 120_000);
});
