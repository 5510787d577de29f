/**
 * A Set-Cookie line's cookie name as a browser reads it (RFC 6265bis §5.6): trimmed, so
 * `sample.sid =...; SameSite=None` sets the session cookie sample.sid again. cookie.flags read the
 * name untrimmed (`sample.sid `), and with `sessionCookie: 'sample.sid'` left such a line unjudged.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

describe('a session cookie set again with a space before its =', () => {
  it('fails cookie.flags with sessionCookie naming it', async () => {
    const app = await startSampleApp({
      // The success page re-issues the session cookie by hand, "so the way back from the service keeps it".
      done: (req, res) => {
        const value = /(?:^|;\s*)sample\.sid=([^;]*)/.exec(req.headers.cookie ?? '')?.[1];
        if (value !== undefined)
          res.append('Set-Cookie', `sample.sid =${value}; Path=/; HttpOnly; Secure; SameSite=None`);
        return false;
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, sessionCookie: 'sample.sid', only: ['cookie.flags'] });
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toEqual(['cookie.flags']);
    expect(table).toMatch(/sample\.sid as set again after the sign-in has SameSite none/);
  }, 60_000);
});
