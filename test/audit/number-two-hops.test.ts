/**
 * A typed number shown in full on a page two redirects after the landing (the success page sends
 * the user on to their profile) is shown in full all the same: entered.number-masked followed one
 * redirect after the landing and passed it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { userNamed } from '../support/users.ts';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

describe('the number in full on the profile the success page sends the user to', () => {
  it('fails entered.number-masked, naming the profile page', async () => {
    const app = await startSampleApp({
      before: (express, ctx) => {
        express.get('/profile', (req, res) => {
          const user = (req.session as { user?: string } | undefined)?.user;
          const phone = user === undefined ? null : ctx.phoneOf(userNamed(user).userRef);
          res.setHeader('Cache-Control', 'no-store');
          res.send(`<!doctype html><title>Profile</title><p>Your number: ${phone ?? 'none'}</p>`);
        });
      },
      done: (_req, res) => {
        res.redirect('/profile');
        return true;
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['entered.number-masked'] });
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toEqual(['entered.number-masked']);
    expect(table).toMatch(/a typed number in full in GET \/profile response body/);
  }, 120_000);
});
