/**
 * redirect.start follows a same-origin form a page submits by script: a success page whose
 * "Continue" form posts a remembered ?next= (in a hidden field) to the app's own /continue, which
 * redirects there, sends the browser to a URL taken from a parameter as a Location would.
 */
import express, { type Request } from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { AuditAgent, auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

const sess = (req: Request) => req.session as unknown as { next?: string };
const escapeHtml = (value: string) =>
  value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/**
 * The start remembers ?next=; the success page posts it on to /continue by script, which redirects
 * there (`localOnly`: only to a path of the app, one `/` and no backslash, else to `/`).
 */
async function appContinuingByForm(localOnly = false): Promise<SampleApp> {
  const app = await startSampleApp({
    before: (server) => {
      server.post('/verify/start', (req, _res, next) => {
        if (typeof req.query.next === 'string') sess(req).next = req.query.next;
        next();
      });
      server.post('/continue', express.urlencoded({ extended: false }), (req, res) => {
        const { next } = req.body as { next?: unknown };
        const local = typeof next === 'string' && /^\/(?![/\\])[^\\]*$/.test(next);
        res.redirect(303, typeof next === 'string' && (local || !localOnly) ? next : '/');
      });
    },
    done: (req, res) => {
      const next = sess(req).next;
      if (next === undefined) return false;
      delete sess(req).next;
      res.setHeader('Cache-Control', 'no-store');
      res.send(
        `<!doctype html><title>Done</title><form id="go" method="post" action="/continue">` +
          `<input type="hidden" name="next" value="${escapeHtml(next)}"><button>Continue</button></form>` +
          `<script>document.getElementById('go').submit()</script>`,
      );
      return true;
    },
  });
  apps.push(app);
  return app;
}

describe.concurrent('redirect.start: a form the page submits', () => {
  it('fails a success page whose script submits a form carrying a remembered ?next= to a route redirecting there', async () => {
    const app = await appContinuingByForm();
    // The mistake is real: the success page's form, posted as its script does, is redirected to the plant.
    const agent = new AuditAgent(app.url, () => {});
    const login = await agent.postForm('/login', { user: 'continueform' });
    const { csrf } = JSON.parse(login.body) as { csrf: string };
    const same = { origin: app.url, 'sec-fetch-site': 'same-origin' };
    const start = await agent.postForm(
      `/verify/start?next=${encodeURIComponent('https://evil.example/x')}`,
      { _csrf: csrf, action: 'grant' },
      same,
    );
    const handoff = /name="hx" value="([^"]*)"/.exec(start.body)?.[1] ?? '';
    const session = await app.emulator.control.sessionByHandoff(handoff);
    await app.emulator.control.completeSession(session.sessionId, 'verified');
    const landing = await agent.request(`/verify/return${new URL(session.returnLocation).search}`);
    const done = await agent.request(landing.location ?? '');
    const next = /name="next" value="([^"]*)"/.exec(done.body)?.[1];
    expect(next).toBe('https://evil.example/x');
    const posted = await agent.postForm('/continue', { next: next ?? '' }, same);
    expect(posted.location).toBe('https://evil.example/x');
    const report = await auditIntegration({ ...app.auditOptions, only: ['redirect.start'] });
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toEqual(['redirect.start']);
    expect(table).toMatch(/a <form> \(POST \/continue\) of the page carries a planted value/);
  }, 120_000);

  it('passes the same form when /continue redirects only to a path of the app', async () => {
    const app = await appContinuingByForm(true);
    const report = await auditIntegration({ ...app.auditOptions, only: ['redirect.start'] });
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toEqual([]);
  }, 120_000);
});
