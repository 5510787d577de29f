/**
 * cookie.flags reads a Set-Cookie line as a browser does (RFC 6265bis §5.6): an attribute's name is
 * trimmed and matched whole, and of several SameSite attributes the last one decides. A middleware
 * that appends `; SameSite=None; Secure` to every cookie (an app framed by a partner's site) leaves
 * its session cookie SameSite None whatever the session library wrote first.
 */
import type { Response } from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

/** The sample app with every Set-Cookie line of its session rewritten by `rewrite` before it is sent. */
async function appRewritingCookies(rewrite: (line: string) => string): Promise<SampleApp> {
  const app = await startSampleApp({
    before: (express) => {
      express.use((_req, res, next) => {
        const setHeader = res.setHeader.bind(res) as Response['setHeader'];
        res.setHeader = ((name: string, value: number | string | readonly string[]) => {
          if (name.toLowerCase() !== 'set-cookie') return setHeader(name, value);
          const lines = (Array.isArray(value) ? value : [String(value)]) as string[];
          return setHeader(name, lines.map(rewrite));
        }) as Response['setHeader'];
        next();
      });
    },
  });
  apps.push(app);
  return app;
}

/** The sign-in's Set-Cookie lines for the session cookie, as the app sends them. */
async function sessionCookieLines(app: SampleApp): Promise<string[]> {
  const answer = await fetch(`${app.url}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'user=cookieflags1',
  });
  return answer.headers.getSetCookie().filter((line) => line.startsWith('sample.sid='));
}

async function cookieFlags(app: SampleApp) {
  const report = await auditIntegration({ ...app.auditOptions, sessionCookie: 'sample.sid', only: ['cookie.flags'] });
  return { failed: failedIds(report), table: formatAuditTable(report) };
}

describe.concurrent('cookie.flags reads each attribute of a Set-Cookie line as a browser does', () => {
  it('fails a session cookie whose SameSite=Lax is followed by an appended SameSite=None (the last one decides)', async () => {
    const app = await appRewritingCookies((line) => `${line}; SameSite=None; Secure`);
    // The line the browser gets: the library's Lax first, the appended None last.
    const [line] = await sessionCookieLines(app);
    expect(line).toMatch(/; SameSite=Lax; SameSite=None; Secure$/);
    const { failed, table } = await cookieFlags(app);
    expect(failed, table).toEqual(['cookie.flags']);
    expect(table).toMatch(/sample\.sid has SameSite none/);
  }, 60_000);

  it('passes a session cookie whose SameSite=None is followed by SameSite=Lax', async () => {
    const app = await appRewritingCookies((line) => line.replace(/; SameSite=Lax/, '; SameSite=None; SameSite=Lax'));
    const { failed, table } = await cookieFlags(app);
    expect(failed, table).toEqual([]);
  }, 60_000);

  it('passes a session cookie whose attributes have spaces around their "=" (SameSite = Lax)', async () => {
    const app = await appRewritingCookies((line) => line.replace(/; SameSite=Lax/, '; SameSite = Lax'));
    const [line] = await sessionCookieLines(app);
    expect(line).toMatch(/; SameSite = Lax/);
    const { failed, table } = await cookieFlags(app);
    expect(failed, table).toEqual([]);
  }, 60_000);
});
