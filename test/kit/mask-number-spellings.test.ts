/**
 * A number in an error of the integrator's code is masked in whatever spelling the kit reads as the
 * user's number: the app's code may quote what the user typed (`req.body.phone`), and the kit texts
 * "＋４４７４００１２３４５６" (a Chinese or Japanese keyboard's), "+44–7400–123456" (dashes of any
 * width), a number wrapped in direction marks (copied from contacts), or one in typographic quotes
 * as readily as "+447400123456". A token (a key, base64) with seven digits in it stays whole.
 */
import { describe, expect, it } from 'vitest';
import { readEnteredNumber } from '../../middleware/numbers/parse-number.ts';
import { maskNumbersInText } from '../../middleware/numbers/mask-number.ts';

/** What the user typed, each read by the kit as +447400123456. */
const TYPED = [
  '＋４４７４００１２３４５６',
  '＋44 7400 123456',
  '（０７４００）１２３４５６',
  '+44–7400–123456',
  '+44—7400—123456',
  '+44−7400−123456',
  '07400\u00ad123456',
  '\u200e+447400123456\u200e',
  '\u2068+447400123456\u2069',
  '+44\u200b7400\u200b123456',
  '۰۷۴۰۰ ۱۲۳۴۵۶',
  '+44–7400[12\u30003456',
  // Marks the kit skips at either end.
  '+.44．7400−123456~',
  '＋44–7‑400–12 3456/',
];

describe('a number the kit reads, quoted by the app in an error, is masked', () => {
  it.each(TYPED)('%j', (typed) => {
    expect(readEnteredNumber(typed, 'GB')?.e164).toBe('+447400123456');
    const masked = maskNumbersInText(`We cannot text ${typed} today.`);
    expect(masked.replace(/\P{Nd}/gu, '')).not.toMatch(/[0-9０-９]{3}/);
    expect(masked).toContain('••\u00a0');
  });

  it.each([
    ['«+447400123456»', '«••\u00a056»'],
    ['“+447400123456”', '“••\u00a056”'],
    ['„+447400123456“', '„••\u00a056“'],
    ['‹07400 123456›', '‹••\u00a056›'],
    ['「０７４００１２３４５６」', '「••\u00a0５６」'],
    ['【+447400123456】', '【••\u00a056】'],
    ['+447400123456。', '••\u00a056。'],
    ['+447400123456，', '••\u00a056，'],
  ])('in quotes or brackets of any script: %j', (quoted, shown) => {
    expect(maskNumbersInText(`no row for ${quoted}`)).toBe(`no row for ${shown}`);
  });
});

describe('a token with seven digits stays whole', () => {
  it.each(['sk_AbCd1234567EfGh', 'q7/1234567+Zx9Pq', 'ab-1234567-cd', 'v1.2345678', 'id_1234567'])('%j', (token) => {
    expect(maskNumbersInText(`login failed (${token})`)).toBe(`login failed (${token})`);
  });
});
