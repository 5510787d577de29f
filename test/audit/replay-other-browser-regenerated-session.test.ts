/**
 * replay.other-browser fails an app whose landing signs the browser that opened the return link in
 * as the attempt's owner on a new session (req.session.regenerate(), as a careful sign-in does),
 * once the kit has answered. The start tokens that browser held before the landing belong to the
 * session thrown away: the check also starts with the token its start page shows after the landing.
 */
import type { NextFunction, Request, Response } from 'express';
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { AuditAgent, auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type CustomFlaw, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
});

const regeneratesAndSignsIn: CustomFlaw = {
  before: (app, ctx) => {
    app.get('/whoami', (req, res) => {
      res.json({ user: (req.session as { user?: string }).user ?? null });
    });
    // The account page with the start form, as every app has one.
    app.get('/', (req, res) => {
      const user = (req.session as { user?: string }).user;
      res.setHeader('Cache-Control', 'no-store');
      res.send(
        user === undefined
          ? '<!doctype html><title>Sign in</title><p>Sign in.</p>'
          : `<!doctype html><title>Account</title><form method="post" action="/verify/start"><input type="hidden" name="_csrf" value="${ctx.kit.csrfToken(req)}"><button name="action" value="grant">Go</button></form>`,
      );
    });
  },
  landing: (ctx) => async (req: Request, res: Response, next: NextFunction) => {
    const sessionId = typeof req.query.session_id === 'string' ? req.query.session_id : undefined;
    const attempt = sessionId === undefined ? undefined : await ctx.kit.store.findAttemptBySessionId(sessionId);
    const owner = attempt?.userRef.replace(/^user-/, '');
    // A browser already signed in as the owner has nothing to change.
    if (attempt !== undefined && (req.session as { user?: string }).user !== owner) {
      const end = res.end.bind(res) as (...args: unknown[]) => Response;
      res.end = ((...args: unknown[]) => {
        // "Passwordless: the verified phone signs you in on this device", on a fresh session.
        if (res.statusCode >= 500) return end(...args);
        req.session.regenerate(() => {
          (req.session as { user?: string }).user = owner;
          req.session.save(() => end(...args));
        });
        return res;
      }) as Response['end'];
    }
    next();
  },
};

describe('a landing that signs its browser in as the owner on a regenerated session', () => {
  it('fails replay.other-browser', async () => {
    const app = await startSampleApp(regeneratesAndSignsIn);
    apps.push(app);
    // The flaw is real: the owner's link opened in a browser with no session signs it in as the owner.
    const owner = new AuditAgent(app.url, () => {});
    const name = `victim${randomBytes(3).toString('hex')}`;
    const { csrf } = JSON.parse((await owner.postForm('/login', { user: name })).body) as { csrf: string };
    const start = await owner.postForm(
      '/verify/start',
      { _csrf: csrf, action: 'grant' },
      { origin: app.url, 'sec-fetch-site': 'same-origin' },
    );
    const handoff = /name="hx" value="([^"]*)"/.exec(start.body)?.[1] ?? '';
    const session = await app.emulator.control.sessionByHandoff(handoff);
    await app.emulator.control.completeSession(session.sessionId, 'verified');
    const attacker = new AuditAgent(app.url, () => {});
    await attacker.request(`/verify/return${new URL(session.returnLocation).search}`);
    expect(JSON.parse((await attacker.request('/whoami')).body)).toEqual({ user: name });

    const report = await auditIntegration({ ...app.auditOptions, only: ['replay.other-browser'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual(['replay.other-browser']);
  }, 120_000);
});
