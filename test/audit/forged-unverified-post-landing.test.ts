/**
 * forged.unverified fails an app whose return path also takes a POST ("the service may return with
 * a form post") and grants on arrival there: the attempt's own session_id and state, posted to the
 * return path as a form, run the action for an attempt still pending or failed. It is the flaw of
 * the `fulfilsOnArrival` fixture spelt with another HTTP method.
 */
import express from 'express';
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { AuditAgent, auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type CustomFlaw, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
});

const postLandingGrants: CustomFlaw = {
  before: (app, ctx) => {
    app.post('/verify/return', express.urlencoded({ extended: false }), (req, res, next) => {
      const { session_id: sessionId, state } = req.body as Record<string, unknown>;
      if (typeof sessionId !== 'string' || typeof state !== 'string') return next();
      ctx.kit.store.findAttemptByState(state).then((attempt) => {
        if (attempt === undefined || attempt.sessionId !== sessionId) return next();
        if (ctx.grants(sessionId) === 0) ctx.insert(sessionId, attempt.userRef);
        res.redirect(303, '/done');
      }, next);
    });
  },
};

describe('a POST landing that grants on arrival', () => {
  it('fails forged.unverified', async () => {
    const app = await startSampleApp(postLandingGrants);
    apps.push(app);
    // The flaw is real: a failed attempt's own return values posted to the return path run the action.
    const agent = new AuditAgent(app.url, () => {});
    const name = `post${randomBytes(3).toString('hex')}`;
    const { csrf } = JSON.parse((await agent.postForm('/login', { user: name })).body) as { csrf: string };
    const start = await agent.postForm(
      '/verify/start',
      { _csrf: csrf, action: 'grant' },
      { origin: app.url, 'sec-fetch-site': 'same-origin' },
    );
    const handoff = /name="hx" value="([^"]*)"/.exec(start.body)?.[1] ?? '';
    const session = await app.emulator.control.sessionByHandoff(handoff);
    await app.emulator.control.completeSession(session.sessionId, 'failed', 'otp_locked');
    const params = new URL(session.returnLocation).searchParams;
    await agent.postForm('/verify/return', Object.fromEntries(params));
    expect(app.grants(session.sessionId), 'the failed attempt was granted').toBe(1);

    const report = await auditIntegration({ ...app.auditOptions, only: ['forged.unverified'] });
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toEqual(['forged.unverified']);
    expect(table).toMatch(/grant: the failed attempt: after its session_id and state were posted to the landing/);
  }, 120_000);
});
