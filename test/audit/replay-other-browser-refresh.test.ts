/**
 * replay.other-browser fails an app whose landing sends another browser on with a refresh instead
 * of a redirect: a 200 "Verified on another device, taking you on..." page with `Refresh: 0;
 * url=/done` and a `<meta http-equiv="refresh">` sends the browser on at once, as a 303 does, and is
 * judged as one.
 */
import type { Request } from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { userNamed } from '../support/users.ts';
import { startSampleApp, type CustomFlaw, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

const signedIn = (req: Request) => (req.session as { user?: string } | undefined)?.user;

/** "Opened the link on your laptop? It's verified all the same: we take you on to the success page." */
const refreshesOtherBrowsers: CustomFlaw = {
  landing: (ctx) => async (req, res, next) => {
    const sessionId = typeof req.query.session_id === 'string' ? req.query.session_id : undefined;
    if (sessionId === undefined) return next();
    const attempt = await ctx.kit.store.findAttemptBySessionId(sessionId);
    if (attempt === undefined) return next();
    const user = signedIn(req);
    if (user !== undefined && userNamed(user).userRef === attempt.userRef) return next();
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Refresh', '0; url=/done');
    res
      .status(200)
      .send(
        '<!doctype html><title>Verified</title><meta http-equiv="refresh" content="0; url=/done"><p>Verified on another device, taking you on...</p>',
      );
  },
};

describe('a landing that sends another browser on with a refresh', () => {
  it('fails replay.other-browser', async () => {
    const app = await startSampleApp(refreshesOtherBrowsers);
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['replay.other-browser'] });
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toContain('replay.other-browser');
  }, 120_000);
});
