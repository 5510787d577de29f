/**
 * A number whose groups a page keeps apart with a named space or dash reference (`&thinsp;`,
 * `&numsp;` the figure space made for digits, `&ensp;`, `&ndash;`) is shown to its reader whole,
 * as one grouped with `&nbsp;` or `&#8201;` is: the audit reads the page as a browser does, so
 * `entered.number-masked` fails a success page showing the typed number so, and what the audit
 * reports masks such a number.
 */
import { describe, expect, it } from 'vitest';
import { maskEveryNumber } from '../../testing/audit/number-mask.ts';
import { typedNumberPages } from '../audit/typed-number-page.ts';

const audited = typedNumberPages();

/** The national form of a typed +44 number, its groups kept apart by `space`: "07400&thinsp;123456". */
const national = (phone: string, space: string) => `0${phone.replace(/^\+44\s*/, '').replace(/\s+/g, space)}`;

describe('a number grouped with a named space reference', () => {
  it.each([['&thinsp;'], ['&numsp;'], ['&ensp;'], ['&ndash;']])(
    'is masked in what the audit says, grouped with %s',
    (space) => {
      // The control: the same number grouped with &nbsp; (or the reference by number) is masked.
      expect(maskEveryNumber('call 07700&nbsp;900123 now')).toBe('call [a number ending 23] now');
      expect(maskEveryNumber('call 07700&#8201;900123 now')).toBe('call [a number ending 23] now');
      const said = maskEveryNumber(`call 07700${space}900123 now`);
      expect(said).toBe('call [a number ending 23] now');
    },
  );

  it('fails entered.number-masked for a success page showing the typed number grouped with &thinsp;', async () => {
    const { check, table } = await audited((phone) => ({
      html: `<!doctype html><title>Done</title><p>Your number is now ${national(phone, '&thinsp;')}.</p>`,
    }));
    expect(check?.status, table).toBe('fail');
  }, 120_000);
});
