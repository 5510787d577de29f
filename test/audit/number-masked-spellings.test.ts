/**
 * entered.number-masked finds a typed number in full however the app spells it: grouped with a
 * typographic dash (a typeset success page), or in a URL inside a parameter, encoded twice (a
 * redirect sending the user on with `?next=` holding the number). A page showing it masked passes.
 */
import { describe, expect, it } from 'vitest';
import { typedNumberPages } from './typed-number-page.ts';

const audited = typedNumberPages();

describe('entered.number-masked and the spellings of a typed number', () => {
  it('fails a success page showing the number grouped with an en dash', async () => {
    const { check, table } = await audited((phone) => ({
      html: `<!doctype html><title>Done</title><p>Your number is now ${phone.replace(/ (\d+)$/, '\u2013$1')}.</p>`,
    }));
    expect(check?.status, table).toBe('fail');
    expect(check?.evidence.join('\n')).toMatch(/a typed number in full in GET \/done response body/);
  }, 120_000);

  it('fails a success page sending the user on with the number in a URL inside ?next=, encoded twice', async () => {
    const { check, table } = await audited((phone) => ({
      location: `/done?shown=1&next=${encodeURIComponent(`/profile?phone=${encodeURIComponent(phone)}`)}`,
    }));
    expect(check?.status, table).toBe('fail');
    expect(check?.evidence.join('\n')).toMatch(/a typed number in full in GET \/done response header location/);
  }, 120_000);

  it('passes a success page showing the number masked', async () => {
    const { check, table } = await audited((phone) => ({
      html: `<!doctype html><title>Done</title><p>Your number is now \u2022\u2022 ${phone.slice(-2)}.</p>`,
    }));
    expect(check?.status, table).toBe('pass');
  }, 120_000);
});
