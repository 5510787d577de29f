/**
 * What the audit reports masks a phone number written with HTML character references as a browser
 * shows it: an error of your code quoting a page that writes the digits as references
 * (`&#48;&#55;…`) or groups them with an encoded space (`07400&#x202F;123456`, as an encoder
 * escaping every non-ASCII character writes a narrow no-break space) is the number in full.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, formatAuditJson, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { decodeHtml } from '../../testing/html.ts';
import { maskEveryNumber } from '../../testing/audit/number-mask.ts';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

const decimalDigits = (text: string) => text.replace(/\d/g, (d) => `&#${d.charCodeAt(0)};`);
const hexDigits = (text: string) => text.replace(/\d/g, (d) => `&#x${d.charCodeAt(0).toString(16)};`);

/** The digits a browser shows of `text`, its references decoded. */
const shownDigits = (text: string) => decodeHtml(text).replace(/\D/g, '');

describe('maskEveryNumber and a number written with character references', () => {
  it.each([
    ['each digit a decimal reference', decimalDigits('07400 123456')],
    ['each digit a hex reference', hexDigits('07400 123456')],
    ['a narrow no-break space as a reference', '07400&#x202F;123456'],
    ['spaces as decimal references, international', '+44&#32;7400&#32;123456'],
    ['a few digits as references', '0&#55;400 12345&#54;'],
  ])('masks it written with %s, keeping the text around it', (_how, written) => {
    expect(shownDigits(written)).toMatch(/7400123456$/);
    const masked = maskEveryNumber(`your page said: <p>texted ${written} today</p>`);
    expect(shownDigits(masked)).not.toContain('7400123456');
    expect(masked).toMatch(/^your page said: <p>texted \+?\[a number ending 56\] today<\/p>$/);
  });

  it('leaves ordinary references and short numbers as written', () => {
    const line = 'Caf&eacute; &amp; &#x2014; order &#35;1234 at 10&#58;30, 12&#8209;34 &#49;&#50;';
    expect(maskEveryNumber(line)).toBe(line);
  });
});

describe('the report of an app whose error quotes a number written with references', () => {
  it('masks it in the report and its JSON', async () => {
    const app = await startSampleApp({});
    apps.push(app);
    const page = `<p>We texted 07400&#x202F;123456 and ${hexDigits('07400 654321')}</p>`;
    const report = await auditIntegration({
      ...app.auditOptions,
      only: ['landing.pages'],
      signIn: () => {
        throw new Error(`sign-in page said: ${page}`);
      },
    });
    expect(report.stopped).toMatch(/sign-in page said: <p>We texted \[a number ending 56\] and \[a number ending 21\]/);
    for (const out of [formatAuditJson(report), formatAuditTable(report)]) {
      expect(shownDigits(out)).not.toContain('7400123456');
      expect(shownDigits(out)).not.toContain('7400654321');
    }
  }, 60_000);
});
