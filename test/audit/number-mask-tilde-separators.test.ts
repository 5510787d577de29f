/**
 * A number grouped with a swung dash (U+2053) or a tilde operator (U+223C), which the kit reads as
 * that number ("07400⁓123456" is +447400123456), is masked in what the audit says, and found by
 * entered.number-masked's search, as a number grouped with a dash is.
 */
import { describe, expect, it } from 'vitest';
import { readEnteredNumber } from '../../middleware/numbers/parse-number.ts';
import { anySpellingOf, maskEveryNumber } from '../../testing/audit/number-mask.ts';

const SPELLINGS = ['07400\u2053123456', '07400\u223c123456', '+44 7400\u2053123456', '+44 7400\u223c123456'];

describe('numbers grouped with a swung dash or a tilde operator', () => {
  it('masks them in what the audit says, as the kit reads them', () => {
    for (const spelling of SPELLINGS) {
      expect(readEnteredNumber(spelling, 'GB')?.e164, spelling).toBe('+447400123456');
      expect(maskEveryNumber(`could not text ${spelling} yet`), spelling).toMatch(
        /^could not text \+?\[a number ending 56\] yet$/,
      );
    }
  });

  it('finds them where a typed number must not be shown', () => {
    for (const spelling of SPELLINGS) expect(anySpellingOf('7400123456').test(spelling), spelling).toBe(true);
  });
});
