/**
 * replay.other-browser fails an app whose landing signs the browser that opened the return link in
 * as the attempt's owner, even when it does so only once the kit has answered (here the session's
 * user is set in a res.end wrapper: "passwordless: a verified phone signs you in on this device").
 * The kit judged that browser before the sign-in, so it was not sent on and was shown nothing of
 * the owner, and the action ran once; yet the browser a relayed link was opened in (an attacker's)
 * is now the owner's. The check starts a verification from each other browser after its landing
 * and fails when the attempt is the owner's.
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

const signsInAfterKit: CustomFlaw = {
  before: (app) => {
    // The account page of the app, as every app has one.
    app.get('/whoami', (req, res) => {
      res.json({ user: (req.session as { user?: string }).user ?? null });
    });
  },
  landing: (ctx) => async (req: Request, res: Response, next: NextFunction) => {
    const sessionId = typeof req.query.session_id === 'string' ? req.query.session_id : undefined;
    const attempt = sessionId === undefined ? undefined : await ctx.kit.store.findAttemptBySessionId(sessionId);
    if (attempt !== undefined) {
      const end = res.end.bind(res) as (...args: unknown[]) => Response;
      res.end = ((...args: unknown[]) => {
        // "Passwordless: the verified phone signs you in on this device too."
        if (res.statusCode < 500) (req.session as { user?: string }).user = attempt.userRef.replace(/^user-/, '');
        return end(...args);
      }) as Response['end'];
    }
    next();
  },
};

describe('a landing that signs its browser in as the owner once the kit has answered', () => {
  it('fails replay.other-browser', async () => {
    const app = await startSampleApp(signsInAfterKit);
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
    const relayed = await attacker.request(`/verify/return${new URL(session.returnLocation).search}`);
    expect(relayed.status, 'the kit did not send the other browser on').toBeLessThan(300);
    expect(JSON.parse((await attacker.request('/whoami')).body)).toEqual({ user: name });

    const report = await auditIntegration({ ...app.auditOptions, only: ['replay.other-browser'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual(['replay.other-browser']);
  }, 120_000);

  it('control: the sound sample app passes replay.other-browser', async () => {
    const app = await startSampleApp();
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['replay.other-browser'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual([]);
  }, 120_000);
});
