/**
 * entered.number-masked finds a typed number in full written in the digits of another script, as
 * the kit reads them and the report masks them: a success page of an Arabic site showing it in
 * Arabic-Indic digits, or a Japanese one in full-width digits, shows the number in full.
 */
import { describe, expect, it } from 'vitest';
import { typedNumberPages } from './typed-number-page.ts';

const audited = typedNumberPages();

describe('entered.number-masked and a typed number in the digits of another script', () => {
  /** `phone` with its digits written from `zero` on (U+0660 Arabic-Indic, U+FF10 full-width). */
  const inScript = (phone: string, zero: number) =>
    phone.replace(/\d/g, (digit) => String.fromCodePoint(zero + Number(digit)));

  it('fails a success page showing the number in Arabic-Indic digits', async () => {
    const { check, table } = await audited((phone) => ({
      html: `<!doctype html><html lang="ar"><title>Done</title><p>رقمك الآن ${inScript(phone, 0x660)}</p>`,
    }));
    expect(check?.status, table).toBe('fail');
    expect(check?.evidence.join('\n')).toMatch(/a typed number in full in GET \/done response body/);
  }, 120_000);

  it('fails a success page showing the number in full-width digits', async () => {
    const { check, table } = await audited((phone) => ({
      html: `<!doctype html><html lang="ja"><title>Done</title><p>電話番号: ${inScript(phone, 0xff10)}</p>`,
    }));
    expect(check?.status, table).toBe('fail');
    expect(check?.evidence.join('\n')).toMatch(/a typed number in full in GET \/done response body/);
  }, 120_000);
});
