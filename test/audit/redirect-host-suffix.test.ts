/**
 * redirect.landing fails a landing that honours ?next= when its host "is ours" by a suffix test
 * without a dot (`hostname.endsWith(ourHost)`): the allow-list bug that lets `evil<ourhost>` (here
 * `evillocalhost`; in production `evilshop.com` for `shop.com`) through. The planted values include
 * such a host.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { AuditAgent, auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type CustomFlaw, type SampleApp } from '../audit/sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
});

const suffixAllowlist: CustomFlaw = {
  landing: (ctx) => (req, res, next) => {
    const wanted = req.query.next;
    const ours = new URL(ctx.url).hostname;
    if (typeof wanted === 'string') {
      let host: string | undefined;
      try {
        host = new URL(wanted, ctx.url).hostname;
      } catch {
        host = undefined;
      }
      // "Only our own hosts (and their subdomains)."
      if (host !== undefined && host.endsWith(ours) && /^https?:/.test(new URL(wanted, ctx.url).protocol)) {
        const location = res.location.bind(res);
        res.location = () => location(wanted);
      }
    }
    next();
  },
};

describe('a landing that honours ?next= when its hostname endsWith the app host', () => {
  it('fails redirect.landing', async () => {
    const app = await startSampleApp(suffixAllowlist);
    apps.push(app);
    // The flaw is real: a verified attempt landed with next=http://evillocalhost/ goes there.
    const agent = new AuditAgent(app.url, () => {});
    const login = await agent.postForm('/login', { user: `exploit${randomBytes(3).toString('hex')}` });
    const { csrf } = JSON.parse(login.body) as { csrf: string };
    const start = await agent.postForm(
      '/verify/start',
      { _csrf: csrf, action: 'grant' },
      { origin: app.url, 'sec-fetch-site': 'same-origin' },
    );
    const handoff = /name="hx" value="([^"]*)"/.exec(start.body)?.[1] ?? '';
    const session = await app.emulator.control.sessionByHandoff(handoff);
    await app.emulator.control.completeSession(session.sessionId, 'verified');
    const query = new URL(session.returnLocation).search.slice(1);
    const evil = `http://evil${new URL(app.url).hostname}/steal`;
    const landed = await agent.request(`/verify/return?${query}&next=${encodeURIComponent(evil)}`);
    expect(landed.location).toBe(evil);

    const report = await auditIntegration({ ...app.auditOptions, only: ['redirect.landing'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual(['redirect.landing']);
  }, 120_000);

  it('control: the sound sample app passes redirect.landing', async () => {
    const app = await startSampleApp();
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['redirect.landing'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual([]);
  }, 120_000);
});
