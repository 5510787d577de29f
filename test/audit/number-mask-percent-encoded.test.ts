/**
 * A number whose digits are percent-encoded, as a URL or a page the audit quotes may write it
 * (`/call/%30%37%34%30%30%31%32%33%34%35%36`, a URL inside a parameter encoded again), is masked in
 * what the audit says, as the kit masks it in a path: judged by what it spells, masked as written.
 * What spells no number stays as written: few digits, a whole IPv4 address, a malformed escape.
 */
import { describe, expect, it } from 'vitest';
import { maskNumbersInPath } from '../../middleware/numbers/mask-number.ts';
import { maskEveryNumber } from '../../testing/audit/number-mask.ts';

const ENCODED_NUMBERS = [
  ['/call/%30%37%34%30%30%31%32%33%34%35%36', '/call/[a number ending 56]'],
  ['/call?to=%2B%34%34%37%34%30%30%31%32%33%34%35%36', '/call?to=%2B[a number ending 56]'],
  ['/call?to=%2b44%207400%20123456', '/call?to=%2b[a number ending 56]'],
  ['/call/%30%37400/123456', '/call/[a number ending 56]'],
  ['/call/%2B44%37400123456', '/call/%2B[a number ending 56]'],
  [
    'Location: /done?next=%2Fcall%3Fto%3D%2530%2537400%2520123456',
    'Location: /done?next=%2Fcall%3Fto%3D[a number ending 56]',
  ],
  ['your number is %EF%BC%90%EF%BC%97400 123456.', 'your number is [a number ending 56].'],
] as const;

const SPARED = [
  '/search/a%20b%20c%20d%20e%20f%20g',
  '/files/%E0%A4%A/50%25/%ZZ',
  '/page/%31%32%33?sort=%2Dprice',
  'from 203%2E0%2E113%2E7',
  '/hosts/127%2E213%2E0%2E0%2F16',
];

describe('a number with percent-encoded digits in what the audit says', () => {
  it.each(ENCODED_NUMBERS)('%j is masked whole, as written around it', (said, masked) => {
    expect(maskEveryNumber(said)).toBe(masked);
  });

  it('is masked where the kit masks it in a path', () => {
    for (const [said] of ENCODED_NUMBERS.slice(0, 5)) expect(maskNumbersInPath(said), said).not.toBe(said);
  });

  it.each(SPARED)('%j, spelling no number, stays as written', (said) => {
    expect(maskEveryNumber(said)).toBe(said);
  });
});
