/**
 * entered.number-masked finds a typed number in full however a page's markup splits it: each group
 * in an element of its own (`<span>+44</span><span>7400</span><span>123456</span>`) shows the
 * number in full to the user all the same.
 */
import { describe, expect, it } from 'vitest';
import { typedNumberPages } from './typed-number-page.ts';

const audited = typedNumberPages();

describe('entered.number-masked and a typed number split by markup', () => {
  it('fails a success page showing each group of the number in its own element', async () => {
    const { check, table } = await audited((phone) => ({
      html: `<!doctype html><title>Done</title><p>Your number is now ${phone
        .split(' ')
        .map((group) => `<span class="group">${group}</span>`)
        .join('')}</p>`,
    }));
    expect(check?.status, table).toBe('fail');
    expect(check?.evidence.join('\n')).toMatch(/a typed number in full in GET \/done response body/);
  }, 120_000);

  it('passes a success page showing the number masked, its last digits in an element', async () => {
    const { check, table } = await audited((phone) => ({
      html: `<!doctype html><title>Done</title><p>Your number is now •• <b>${phone.slice(-2)}</b></p>`,
    }));
    expect(check?.status, table).toBe('pass');
  }, 120_000);
});
