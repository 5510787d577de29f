/**
 * The audit reads a number in every spelling the kit's own masking reads as one: a tilde or a
 * full-width tilde or plus between its groups, and any invisible format mark (an invisible times, a
 * left-to-right override, an interlinear annotation mark) that a browser shows as nothing. Such a
 * number is masked in what the audit says, and found in full by entered.number-masked.
 */
import { describe, expect, it } from 'vitest';
import { maskNumbersInText } from '../../middleware/numbers/mask-number.ts';
import { anySpellingOf, maskEveryNumber, maskTypedRange, NumberMask } from '../../testing/audit/number-mask.ts';
import { typedNumberPages } from './typed-number-page.ts';

const SPELLINGS = [
  '07400~100123',
  '07400\uff5e100123',
  '07400\uff0b100123',
  '07400\u2062100123',
  '07400 \u202d100123',
  '07400\u206a100123',
  '07400\ufff9100123',
  '07400\u180e100123',
];

describe('a number spelt with a mark the kit reads between its groups', () => {
  it.each(SPELLINGS)('%j: masked by the kit, masked in the report and found by the check', (spelt) => {
    expect(maskNumbersInText(`your number is ${spelt}`)).not.toMatch(/7400|100123/);
    expect(anySpellingOf('7400100123').test(spelt)).toBe(true);
    expect(maskEveryNumber(`your number is ${spelt}`)).not.toMatch(/7400|100123/);
    expect(maskTypedRange(`your number is ${spelt}`)).not.toMatch(/7400|100123/);
    const known = new NumberMask();
    known.add('+447400100123');
    expect(known.mask(`your number is ${spelt}`)).not.toMatch(/7400|100123/);
  });
});

const audited = typedNumberPages();

describe('entered.number-masked and a number grouped with a full-width tilde', () => {
  it('fails a success page showing the typed number with its groups joined by "～"', async () => {
    const { check, table } = await audited((phone) => ({
      html: `<!doctype html><title>Done</title><p>Your number is now ${phone.replace(/ (\d+)$/, '\uff5e$1')}.</p>`,
    }));
    expect(check?.status, table).toBe('fail');
    expect(check?.evidence.join('\n')).toMatch(/a typed number in full in GET \/done response body/);
  }, 120_000);
});
