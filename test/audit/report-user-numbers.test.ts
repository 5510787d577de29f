/**
 * A guarded page whose title names the signed-in user's own phone number ("Account of +1 555 …"),
 * a number the audit never typed: the step-up checks quote that page's title in their evidence,
 * and the report shows the number masked (`+[a number ending 11]`), never in full.
 */
import type { Request } from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, formatAuditJson, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { maskInternational } from '../../testing/audit/number-mask.ts';
import { userNamed } from '../support/users.ts';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

describe("the report and a user's own number on a page", () => {
  it('step-up.bound quotes the account page by its title, the number in it masked', async () => {
    const numbers: string[] = [];
    const app = await startSampleApp({
      before: (app, ctx) => {
        const guard = ctx.kit.requireRecentVerification({ scope: 'see_account', maxAge: 600 });
        app.get('/account', guard, (req: Request, res) => {
          const user = (req.session as { user?: string }).user ?? '';
          const number = userNamed(user).destination;
          numbers.push(number);
          res.setHeader('Cache-Control', 'no-store');
          res.send(`<!doctype html><title>Account of ${number}</title><p>Your account.</p>`);
        });
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['step-up.bound'] });
    const json = formatAuditJson(report);
    expect(report.ok, formatAuditTable(report)).toBe(true);
    // The page was shown and quoted: with its number masked.
    expect(numbers.length).toBeGreaterThan(0);
    expect(json).toMatch(/page \\"Account of \+\[a number ending \d\d\]\\"/);
    for (const number of new Set(numbers)) expect(json).not.toContain(number.slice(1));
  }, 120_000);

  it('a number in a URL inside a parameter, encoded again (%252B44%25207400...), is masked as well', () => {
    // A redirect's Location sending the user on with a URL of the app as ?next= carries it so.
    const location = '/login?next=%2Fprofile%3Fphone%3D%252B44%25207400%2520123456%26tab%3D2';
    const said = maskInternational(`GET /profile answered 302 -> ${location}`);
    // Decoded as the browser and the app would, no digits of the whole number remain.
    expect(decodeURIComponent(decodeURIComponent(said)).replace(/\D/g, '')).not.toContain('447400123456');
    expect(said).toContain('%252B[a number ending 56]%26tab%3D2');
    for (const spelt of ['%252B447400123456', '%25252B447400123456', '%2B44+7400+123456', '+44 7400 123456'])
      expect(maskInternational(spelt)).toMatch(/^(?:%(?:25)*2B|\+)\[a number ending 56\]$/);
  });

  it("the shortest real numbers, 7 digits with their country code (Niue's +683 4002), are masked too", () => {
    expect(maskInternational('Account of +683 4002')).toBe('Account of +[a number ending 02]');
    expect(maskInternational('Account of +6834002.')).toBe('Account of +[a number ending 02].');
    // Six digits are no phone number: left as written.
    expect(maskInternational('build +123456')).toBe('build +123456');
  });
});
