/**
 * cookie.flags judges the session cookie the browser holds through a whole verification, not only
 * the one the sign-in sets: an app that re-issues its session cookie at the start with SameSite=None
 * ("the hosted page sends the user back from another site") leaves every later request of that
 * browser open to cross-site use, whatever the sign-in wrote. It judges the cookie as every action's
 * start sets it: an app loosening it for its second action only ("the phone change comes back from
 * the service on another site") passed when the first action alone was started.
 */
import express, { type Request } from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { AuditAgent, auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

type Session = Request['session'] & { verifying?: boolean };

/**
 * The sample app whose start re-issues the session cookie SameSite=None for the way back from the
 * service: every start, or only the start of `onlyFor` (an action's name).
 */
async function appLooseningAtStart(onlyFor?: string): Promise<SampleApp> {
  const app = await startSampleApp({
    before: (server) => {
      server.post('/verify/start', express.urlencoded({ extended: false }), (req, _res, next) => {
        const { action } = req.body as { action?: unknown };
        if (onlyFor !== undefined && action !== onlyFor) return next();
        const session = req.session as Session;
        session.cookie.sameSite = 'none';
        session.cookie.maxAge = 30 * 60 * 1000;
        session.verifying = true;
        next();
      });
    },
  });
  apps.push(app);
  return app;
}

async function cookieFlags(app: SampleApp) {
  const report = await auditIntegration({ ...app.auditOptions, sessionCookie: 'sample.sid', only: ['cookie.flags'] });
  return { failed: failedIds(report), table: formatAuditTable(report) };
}

describe.concurrent('cookie.flags follows the session cookie past the sign-in', () => {
  it('fails a session cookie the start re-issues with SameSite=None (Lax at the sign-in)', async () => {
    const app = await appLooseningAtStart();
    // The mistake is real: behind the https proxy, the sign-in's cookie is Lax, the start's None; Secure.
    const agent = new AuditAgent(app.url, () => {}, 10_000, { 'x-forwarded-proto': 'https' });
    const login = await agent.postForm('/login', { user: 'loosenedatstart' });
    expect(login.setCookies.join('\n')).toMatch(/sample\.sid=.*SameSite=Lax/);
    const { csrf } = JSON.parse(login.body) as { csrf: string };
    const start = await agent.postForm(
      '/verify/start',
      { _csrf: csrf, action: 'grant' },
      { origin: app.url, 'sec-fetch-site': 'same-origin' },
    );
    expect(start.status).toBe(200);
    expect(start.setCookies.join('\n')).toMatch(/sample\.sid=.*Secure; SameSite=None/);
    const { failed, table } = await cookieFlags(app);
    expect(failed, table).toEqual(['cookie.flags']);
    expect(table).toMatch(/sample\.sid as set again after the sign-in has SameSite none/);
  }, 60_000);

  it("fails a session cookie re-issued with SameSite=None by the second action's start only", async () => {
    const app = await appLooseningAtStart('change_phone');
    // The mistake is real: behind the https proxy, change_phone's start sets the cookie None, grant's does not.
    const agent = new AuditAgent(app.url, () => {}, 10_000, { 'x-forwarded-proto': 'https' });
    const login = await agent.postForm('/login', { user: 'loosenedsecond' });
    const { csrf } = JSON.parse(login.body) as { csrf: string };
    const start = (fields: Record<string, string>) =>
      agent.postForm('/verify/start', { _csrf: csrf, ...fields }, { origin: app.url, 'sec-fetch-site': 'same-origin' });
    const first = await start({ action: 'grant' });
    expect(first.setCookies.join('\n')).not.toMatch(/SameSite=None/);
    const second = await start({ action: 'change_phone', phone: '+447400199991' });
    expect(second.status).toBe(200);
    expect(second.setCookies.join('\n')).toMatch(/sample\.sid=.*Secure; SameSite=None/);
    const { failed, table } = await cookieFlags(app);
    expect(failed, table).toEqual(['cookie.flags']);
    expect(table).toMatch(/sample\.sid as set again after the sign-in has SameSite none/);
  }, 60_000);

  it('passes the sample app, whose session cookie stays Lax through the start and the landing', async () => {
    const app = await startSampleApp();
    apps.push(app);
    const { failed, table } = await cookieFlags(app);
    expect(failed, table).toEqual([]);
  }, 60_000);
});
