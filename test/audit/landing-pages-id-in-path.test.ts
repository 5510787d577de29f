/**
 * landing.pages fails a success page whose path names the attempt (`/done/ses_…`, as a successPath
 * function gives) and grants whatever attempt the path names: other attempts' ids were swapped into
 * the query only, never into the path, so such a page passed.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  AuditAgent,
  auditIntegration,
  emulatorControl,
  failedIds,
  formatAuditTable,
} from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

async function pathIdApp(): Promise<SampleApp> {
  const app = await startSampleApp({
    before: (express, ctx) => {
      express.get('/done/:id', async (req, res, next) => {
        try {
          // "Just in case the landing missed it."
          const attempt = await ctx.kit.store.findAttemptBySessionId(req.params.id);
          if (attempt !== undefined && ctx.grants(attempt.sessionId) === 0)
            ctx.insert(attempt.sessionId, attempt.userRef);
          res.setHeader('Cache-Control', 'no-store');
          res.send('<!doctype html><title>Done</title><p>Done.</p>');
        } catch (error) {
          next(error);
        }
      });
    },
    landing: () => (req, res, next) => {
      const sessionId = typeof req.query.session_id === 'string' ? req.query.session_id : undefined;
      if (sessionId !== undefined) {
        // successPath: (landed) => `/done/${encodeURIComponent(landed.sessionId)}`
        const location = res.location.bind(res);
        res.location = (path: string) => location(path === '/done' ? `/done/${encodeURIComponent(sessionId)}` : path);
      }
      next();
    },
  });
  apps.push(app);
  return app;
}

describe('a success page whose path names the attempt, granting the attempt it names', () => {
  it('(the flaw is real) /done/<a pending attempt> runs its action', async () => {
    const app = await pathIdApp();
    const agent = new AuditAgent(app.url, () => undefined, 20_000, { 'x-forwarded-proto': 'https' });
    const { csrf } = JSON.parse((await agent.postForm('/login', { user: 'pathuser' })).body) as { csrf: string };
    const start = await agent.postForm(
      '/verify/start',
      { action: 'grant', _csrf: csrf },
      { origin: new URL(app.url).origin, 'sec-fetch-site': 'same-origin' },
    );
    const hx =
      /name="hx"[^>]*value="([^"]+)"/.exec(start.body)?.[1] ?? /value="([^"]+)"[^>]*name="hx"/.exec(start.body)?.[1];
    const session = await emulatorControl(app.emulator.url).sessionByHandoff(hx ?? '');
    expect(session.status).toBe('pending');
    expect(app.grants(session.sessionId)).toBe(0);
    await agent.request(`/done/${encodeURIComponent(session.sessionId)}`);
    expect(app.grants(session.sessionId)).toBe(1);
  }, 60_000);

  it('fails landing.pages', async () => {
    const app = await pathIdApp();
    const report = await auditIntegration({ ...app.auditOptions, only: ['landing.pages'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual(['landing.pages']);
  }, 120_000);
});
