/**
 * A user's own number written in national form ("07700 900123", "(202) 555-0143"), one the audit
 * never typed nor knows, is masked in the report as one in international form is: a guarded page
 * titled with it is quoted by its title with the number masked. Text with seven digits or more is
 * masked as the kit counts a phone number; an IP address and shorter runs are left as written.
 */
import type { Request } from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, formatAuditJson, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { maskEveryNumber } from '../../testing/audit/number-mask.ts';
import { userNamed } from '../support/users.ts';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

/** "+15550123456" as a US page writes it at home: "(555) 012-3456". */
function usNational(e164: string): string {
  const d = e164.slice(2);
  return `(${d.slice(0, 3)}) ${d.slice(3, 6)}-${d.slice(6)}`;
}

describe('numbers in national form in what the audit says', () => {
  it("step-up.bound quotes a page titled with the user's number in national form, the number masked", async () => {
    const numbers: string[] = [];
    const app = await startSampleApp({
      before: (app, ctx) => {
        const guard = ctx.kit.requireRecentVerification({ scope: 'see_account', maxAge: 600 });
        app.get('/account', guard, (req: Request, res) => {
          const number = usNational(userNamed((req.session as { user?: string }).user ?? '').destination);
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
    expect(numbers.length).toBeGreaterThan(0);
    expect(json).toMatch(/page \\"Account of \(\[a number ending \d\d\]\\"/);
    for (const number of new Set(numbers)) {
      expect(json).not.toContain(number);
      expect(json.replace(/\D/g, '')).not.toContain(number.replace(/\D/g, ''));
    }
  }, 120_000);

  it('masks national spellings, grouped, encoded once or twice', () => {
    for (const [said, ending] of [
      ['could not text 07700 900123 yet', '23'],
      ['could not text (202) 555-0143 yet', '43'],
      ['could not text 202.555.0143 yet', '43'],
      ['GET /profile?phone=07700%20900123', '23'],
      ['GET /login?next=%2Fprofile%3Fphone%3D07700%2520900123', '23'],
      ['call 0770&nbsp;090&#160;0123', '23'],
      ['order 4400123', '23'],
    ] as const) {
      const masked = maskEveryNumber(said);
      expect(masked, said).toContain(`[a number ending ${ending}]`);
      expect(masked.replace(/%(?:25)*(?:20|2F|3F|3D)|&nbsp;|&#160;|\D/g, ''), said).not.toMatch(/\d{5}/);
    }
  });

  it('masks a number written in the digits of another script, as the kit reads them', () => {
    // Arabic-Indic digits (an Arabic page) and full-width ones (a Japanese page).
    expect(maskEveryNumber('Account of ٠٧٧٠٠ ٩٠٠١٢٣')).toBe('Account of [a number ending ٢٣]');
    expect(maskEveryNumber('Account of ０７７００ ９００１２３')).toBe('Account of [a number ending ２３]');
  });

  it('masks a number grouped with typographic dashes, as a typeset page writes it', () => {
    // An en dash (U+2013), a non-breaking hyphen (U+2011), a minus sign (U+2212).
    expect(maskEveryNumber('Call (202) 555\u20130143')).toBe('Call ([a number ending 43]');
    expect(maskEveryNumber('Call 07700\u2011900123')).toBe('Call [a number ending 23]');
    expect(maskEveryNumber('Call +44 7400\u2212123456')).toBe('Call +[a number ending 56]');
  });

  it('leaves what the kit counts as no phone number as written: IP addresses, fewer than seven digits', () => {
    for (const said of [
      'each browser connects from its own address in 127.213.0.0/16, never 127.0.0.1',
      'from 127.213.1.2 and [::1]:4010',
      '12 starts: 3 handed off, 9 refused with 429, 3 SMS sent',
      'answered 302 within 240000 ms',
    ])
      expect(maskEveryNumber(said)).toBe(said);
  });
});
