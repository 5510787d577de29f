/**
 * redirect.start follows a same-origin form a page submits by script: a success page whose
 * "Continue" form posts a remembered ?next= (in a hidden field) to the app's own /continue, which
 * redirects there, sends the browser to a URL taken from a parameter as a Location would. The
 * field may keep the URL percent-encoded, the route decoding it: such a form was never submitted.
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

/** How the app below writes ?next= into its form and reads it back. */
interface ContinueForm {
  /** /continue redirects only to a path of the app (one `/` and no backslash), else to `/`. */
  localOnly?: boolean;
  /** The hidden field keeps ?next= percent-encoded; /continue decodes it. */
  encoded?: boolean;
}

/** The start remembers ?next=; the success page posts it on to /continue by script, which redirects there. */
async function appContinuingByForm({ localOnly = false, encoded = false }: ContinueForm = {}): Promise<SampleApp> {
  const app = await startSampleApp({
    before: (server) => {
      server.post('/verify/start', (req, _res, next) => {
        if (typeof req.query.next === 'string') sess(req).next = req.query.next;
        next();
      });
      server.post('/continue', express.urlencoded({ extended: false }), (req, res) => {
        const { next: field } = req.body as { next?: unknown };
        const next = typeof field === 'string' && encoded ? decodeURIComponent(field) : field;
        const local = typeof next === 'string' && /^\/(?![/\\])[^\\]*$/.test(next);
        res.redirect(303, typeof next === 'string' && (local || !localOnly) ? next : '/');
      });
    },
    done: (req, res) => {
      const next = sess(req).next;
      if (next === undefined) return false;
      delete sess(req).next;
      const field = encoded ? encodeURIComponent(next) : escapeHtml(next);
      res.setHeader('Cache-Control', 'no-store');
      res.send(
        `<!doctype html><title>Done</title><form id="go" method="post" action="/continue">` +
          `<input type="hidden" name="next" value="${field}"><button>Continue</button></form>` +
          `<script>document.getElementById('go').submit()</script>`,
      );
      return true;
    },
  });
  apps.push(app);
  return app;
}

/**
 * Walks a user through a verification started with ?next= planted, as a browser does: the success
 * page's hidden field, and where posting it (as its script does) sends the browser.
 */
async function continueAfterPlant(
  app: SampleApp,
  user: string,
): Promise<{ field: string | undefined; location: string | null }> {
  const agent = new AuditAgent(app.url, () => {});
  const login = await agent.postForm('/login', { user });
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
  const field = /name="next" value="([^"]*)"/.exec(done.body)?.[1];
  const posted = await agent.postForm('/continue', { next: field ?? '' }, same);
  return { field, location: posted.location };
}

describe.concurrent('redirect.start: a form the page submits', () => {
  it.each([
    [
      'a success page whose script submits a form carrying a remembered ?next= to a route redirecting there',
      false,
      'continueform',
      'https://evil.example/x',
    ],
    [
      'the same form keeping ?next= percent-encoded in its field, decoded by /continue',
      true,
      'continueencoded',
      'https%3A%2F%2Fevil.example%2Fx',
    ],
  ])(
    'fails %s',
    async (_case, encoded, plant, field) => {
      const app = await appContinuingByForm({ encoded });
      // The mistake is real: the success page's form, posted as its script does, is redirected to the plant.
      expect(await continueAfterPlant(app, plant)).toEqual({ field, location: 'https://evil.example/x' });
      const report = await auditIntegration({ ...app.auditOptions, only: ['redirect.start'] });
      const table = formatAuditTable(report);
      expect(failedIds(report), table).toEqual(['redirect.start']);
      expect(table).toMatch(/a <form> \(POST \/continue\) of the page carries a planted value/);
    },
    120_000,
  );

  it('passes the same form when /continue redirects only to a path of the app', async () => {
    const app = await appContinuingByForm({ localOnly: true });
    const report = await auditIntegration({ ...app.auditOptions, only: ['redirect.start'] });
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toEqual([]);
  }, 120_000);
});
