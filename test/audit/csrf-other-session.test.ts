/**
 * csrf.no-token refuses a start whose token is not the browser's own session's: an app with its own
 * CSRF tokens (`csrf.dangerouslyReplaceTokenCheck`) signed under one key for the whole app, not bound
 * to the session, accepts a token its attacker got by signing in himself, in any victim's form.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import express from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { AuditAgent, auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

/** The sample app with its own start tokens: a nonce and its HMAC under one key for the whole app. */
async function appSigningTokensForAll(): Promise<SampleApp> {
  const key = randomBytes(32);
  const mac = (nonce: string) => createHmac('sha256', key).update(nonce).digest();
  const issue = () => {
    const nonce = randomBytes(16).toString('base64url');
    return `${nonce}.${mac(nonce).toString('base64url')}`;
  };
  const genuine = (token: unknown) => {
    if (typeof token !== 'string') return false;
    const [nonce = '', given = ''] = token.split('.');
    const sent = Buffer.from(given, 'base64url');
    return nonce !== '' && sent.length === 32 && timingSafeEqual(sent, mac(nonce));
  };
  const app = await startSampleApp({
    csrf: { dangerouslyReplaceTokenCheck: (req) => genuine((req.body as { _csrf?: unknown })._csrf) },
    before: (server) => {
      server.post('/login', express.urlencoded({ extended: false }), (req, res, next) => {
        const user = (req.body as { user?: unknown }).user;
        if (typeof user !== 'string' || !/^[a-z0-9]{1,40}$/.test(user)) {
          res.status(400).json({ error: 'user' });
          return;
        }
        req.session.regenerate((error?: unknown) => {
          if (error) return next(error);
          (req.session as unknown as { user: string }).user = user;
          res.setHeader('Cache-Control', 'no-store');
          res.json({ csrf: issue() });
        });
      });
    },
  });
  apps.push(app);
  return app;
}

async function signIn(app: SampleApp, name: string): Promise<{ agent: AuditAgent; csrf: string }> {
  const agent = new AuditAgent(app.url, () => {});
  const login = await agent.postForm('/login', { user: name });
  return { agent, csrf: (JSON.parse(login.body) as { csrf: string }).csrf };
}

async function csrfNoToken(app: SampleApp) {
  const report = await auditIntegration({ ...app.auditOptions, only: ['csrf.no-token'] });
  return { failed: failedIds(report), table: formatAuditTable(report) };
}

describe.concurrent("csrf.no-token: another session's token is no token", () => {
  it("fails an app whose own start tokens are signed for the whole app: another user's token starts a verification", async () => {
    const app = await appSigningTokensForAll();
    // The mistake is real: the victim's browser, posting the attacker's own token, is handed off.
    const attacker = await signIn(app, 'csrfattacker');
    const victim = await signIn(app, 'csrfvictim');
    const same = { origin: app.url, 'sec-fetch-site': 'same-origin' };
    const refused = await victim.agent.postForm('/verify/start', { _csrf: `${victim.csrf}x`, action: 'grant' }, same);
    expect(refused.status).toBe(403);
    const start = await victim.agent.postForm('/verify/start', { _csrf: attacker.csrf, action: 'grant' }, same);
    expect(start.status).toBe(200);
    expect(start.body).toMatch(/name="hx"/);
    const { failed, table } = await csrfNoToken(app);
    expect(failed, table).toEqual(['csrf.no-token']);
    expect(table).toMatch(/a start with another user's _csrf/);
  }, 60_000);

  it("passes the sample app, whose kit refuses another session's token", async () => {
    const app = await startSampleApp();
    apps.push(app);
    const { failed, table } = await csrfNoToken(app);
    expect(failed, table).toEqual([]);
    expect(table).not.toMatch(/not run/);
  }, 60_000);
});
