/**
 * A number whose digits are kept apart by zero-width (non-)joiners (U+200C, U+200D; `&zwnj;`, as
 * pages and emails write it to stop a phone's browser from turning the number into a link) is shown
 * to its reader in full: entered.number-masked fails a page showing a typed number so, and what the
 * audit reports masks such a number as it masks one grouped by spaces.
 */
import { describe, expect, it } from 'vitest';
import { maskEveryNumber } from '../../testing/audit/number-mask.ts';
import { decodeHtml } from '../../testing/html.ts';
import { typedNumberPages } from './typed-number-page.ts';

const audited = typedNumberPages();

/** The national form of a typed +44 number: "07400 123456". */
const national = (phone: string) => `0${phone.replace(/^\+44\s*/, '')}`;

/** The digits a reader sees of `text`: references decoded, the invisible joiners unseen. */
const seenDigits = (text: string) => decodeHtml(text).replace(/\D/g, '');

describe('a number kept apart by zero-width joiners', () => {
  it.each([
    ['a zero-width non-joiner between its groups', '07400\u200c123456'],
    ['a zero-width joiner between its groups', '+44 7400\u200d123456'],
    ['a zero-width non-joiner between each digit', [...'07400123456'].join('\u200c')],
    ['&zwnj; between its groups', '07400&zwnj;123&zwnj;456'],
    ['&#8204; between its groups', '07400&#8204;123456'],
  ])('is masked in what the audit says, written with %s', (_how, written) => {
    expect(seenDigits(written)).toMatch(/7400123456$/);
    const said = maskEveryNumber(`your app said: call ${written} now`);
    expect(seenDigits(said)).not.toContain('7400123456');
    expect(said).toMatch(/^your app said: call \+?\[a number ending 56\] now$/);
  });

  it('fails entered.number-masked for a success page showing the typed number with &zwnj; between its groups', async () => {
    const { check, table } = await audited((phone) => ({
      html: `<!doctype html><title>Done</title><p>Your number is now ${national(phone).replace(' ', '&zwnj;')}.</p>`,
    }));
    expect(check?.status, table).toBe('fail');
    expect(check?.evidence.join('\n')).toMatch(/a typed number in full in GET \/done response body/);
  }, 120_000);

  it('fails entered.number-masked for a success page with a zero-width non-joiner between each digit', async () => {
    const { check, table } = await audited((phone) => ({
      html: `<!doctype html><title>Done</title><p>Your number is now ${[...phone.replace(/\s/g, '')].join('\u200c')}.</p>`,
    }));
    expect(check?.status, table).toBe('fail');
  }, 120_000);
});
