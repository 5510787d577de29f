/**
 * entered.number-masked reads a page as its browser shows it: a typed number whose characters are
 * written as HTML character references (`&#48;&#55;…`, `&#x30;…`, `&plus;44`) is rendered in full
 * to the user all the same, so a page writing it so fails; one showing it masked passes.
 */
import { describe, expect, it } from 'vitest';
import { typedNumberPages } from './typed-number-page.ts';

const audited = typedNumberPages();

/** `text` with each digit written as a decimal reference, or a hex one. */
const decimal = (text: string) => text.replace(/\d/g, (d) => `&#${d.charCodeAt(0)};`);
const hex = (text: string) => text.replace(/\d/g, (d) => `&#x${d.charCodeAt(0).toString(16)};`);

/** The national form of a typed +44 number: "07400 123456". */
const national = (phone: string) => `0${phone.replace(/^\+44\s*/, '')}`;

const pageShowing = (shown: string) => ({
  html: `<!doctype html><title>Done</title><p>Your number is now ${shown}.</p>`,
});

describe('entered.number-masked and a typed number written as character references', () => {
  it('fails a success page writing each digit of the national number as a decimal reference', async () => {
    const { check, table } = await audited((phone) => pageShowing(decimal(national(phone))));
    expect(check?.status, table).toBe('fail');
    expect(check?.evidence.join('\n')).toMatch(/a typed number in full in GET \/done response body/);
  }, 120_000);

  it('fails a success page writing each digit as a hex reference, in a link the user reads', async () => {
    const { check, table } = await audited((phone) => ({
      html: `<!doctype html><title>Done</title><p><a href="/account">${hex(phone)}</a></p>`,
    }));
    expect(check?.status, table).toBe('fail');
    expect(check?.evidence.join('\n')).toMatch(/a typed number in full in GET \/done response body/);
  }, 120_000);

  it('fails a success page writing the + as &#43; or &plus; and the spaces as references', async () => {
    for (const plus of ['&#43;', '&plus;']) {
      const { check, table } = await audited((phone) =>
        pageShowing(
          phone
            .replace('+', plus)
            .replace(/ /g, '&#32;')
            .replace(/(\d{4})$/, '&#x2D;$1'),
        ),
      );
      expect(check?.status, `${plus}\n${table}`).toBe('fail');
    }
  }, 240_000);

  it('passes a success page showing the number masked, its last digits as references', async () => {
    const { check, table } = await audited((phone) => pageShowing(`&bull;&bull; ${decimal(phone.slice(-2))}`));
    expect(check?.status, table).toBe('pass');
  }, 120_000);
});
