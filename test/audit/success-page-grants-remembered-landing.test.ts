/**
 * landing.pages fails a success page that grants "just in case" the attempt the landing last saw,
 * kept in the user's session rather than in the success page's URL: a user who lands a failed (or
 * pending) attempt of their own and then opens the success page gets the action's effect without
 * ever verifying. The check lands the user's own pending and failed attempts and opens the pages
 * after the verified landing again in the same browser. It is the flaw of the
 * `successGrantsBySessionId` fixture, with the id carried by the session instead of the query.
 */
import type { NextFunction, Request, Response } from 'express';
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { AuditAgent, auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type CustomFlaw, type SampleApp } from './sample-app.ts';
import { userNamed } from '../support/users.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
});

type Kept = { user?: string; lastLanded?: string };

const grantsRemembered: CustomFlaw = {
  // "Remember which verification came back, so the success page can finish it if the landing did not."
  landing: () => (req: Request, _res: Response, next: NextFunction) => {
    if (typeof req.query.session_id === 'string') (req.session as Kept).lastLanded = req.query.session_id;
    next();
  },
  done: (req, _res, ctx) => {
    const kept = req.session as Kept;
    const id = kept.lastLanded;
    if (id !== undefined && kept.user !== undefined) {
      delete kept.lastLanded;
      void ctx.kit.store.findAttemptBySessionId(id).then((attempt) => {
        // Only the user's own attempt, and only once.
        if (attempt !== undefined && attempt.userRef === userNamed(kept.user ?? '').userRef && ctx.grants(id) === 0)
          ctx.insert(id, attempt.userRef);
      });
    }
    return false;
  },
};

describe('a success page granting the attempt its landing remembered in the session', () => {
  it('fails landing.pages', async () => {
    const app = await startSampleApp(grantsRemembered);
    apps.push(app);
    // The flaw is real: a failed attempt's landing, then the success page, runs the action.
    const agent = new AuditAgent(app.url, () => {});
    const name = `self${randomBytes(3).toString('hex')}`;
    const { csrf } = JSON.parse((await agent.postForm('/login', { user: name })).body) as { csrf: string };
    const start = await agent.postForm(
      '/verify/start',
      { _csrf: csrf, action: 'grant' },
      { origin: app.url, 'sec-fetch-site': 'same-origin' },
    );
    const handoff = /name="hx" value="([^"]*)"/.exec(start.body)?.[1] ?? '';
    const session = await app.emulator.control.sessionByHandoff(handoff);
    await app.emulator.control.completeSession(session.sessionId, 'failed', 'otp_locked');
    const landing = await agent.request(`/verify/return${new URL(session.returnLocation).search}`);
    expect(landing.status, 'the failed landing is not sent on').toBeLessThan(300);
    await agent.request('/done');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(app.grants(session.sessionId), 'the failed attempt was granted by the success page').toBe(1);

    const report = await auditIntegration({ ...app.auditOptions, only: ['landing.pages', 'forged.unverified'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual(['landing.pages']);
  }, 180_000);
});
