/**
 * A number is masked in what the audit reports, and found by entered.number-masked, in every
 * spelling the kit itself reads as that number: square brackets around a group (`[07400] 100123`)
 * and the direction marks a right-to-left page puts between groups (an RLM, an isolate) included.
 */
import { describe, expect, it } from 'vitest';
import { readEnteredNumber } from '../../middleware/numbers/parse-number.ts';
import { anySpellingOf, maskEveryNumber, NumberMask } from '../../testing/audit/number-mask.ts';

const SPELLINGS = [
  '[07400] 100123',
  '\uff3b07400\uff3d 100123',
  '07400\u200f100123',
  '07400 \u2067100123\u2069',
  '+44\u200e 7400\u200e 100123',
];

describe('a number spelt with brackets or direction marks between its digits', () => {
  it.each(SPELLINGS)('%j: read by the kit as the number, masked in the report and found by the check', (spelt) => {
    expect(readEnteredNumber(spelt, 'GB')?.e164).toBe('+447400100123');
    const masked = maskEveryNumber(`your number is ${spelt}`);
    expect(masked).toContain('[a number ending 23]');
    expect(masked).not.toMatch(/7400|100123/);
    const known = new NumberMask();
    known.add('+447400100123');
    expect(known.mask(`your number is ${spelt}`)).not.toMatch(/7400|100123/);
    expect(anySpellingOf('7400100123').test(spelt)).toBe(true);
  });
});
