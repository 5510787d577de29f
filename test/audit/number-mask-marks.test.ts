/**
 * A number masked in what the audit says keeps its own mark: the digits of "[a number ending 23]"
 * are no part of a number written after it, so two numbers side by side ("+44 7700 900123
 * (07700 900456)") are two marks, each ending as its number does, and a short count after a mark
 * stays as written. A mark written by the app itself spares no more than its two digits.
 */
import { describe, expect, it } from 'vitest';
import { maskEveryNumber } from '../../testing/audit/number-mask.ts';

describe('masked numbers side by side in what the audit says', () => {
  it('masks each of two numbers side by side with its own mark', () => {
    expect(maskEveryNumber('could not text +44 7700 900123 (07700 900456)')).toBe(
      'could not text +[a number ending 23] ([a number ending 56])',
    );
    expect(maskEveryNumber('+44 7700 900123 [07700 900456]')).toBe('+[a number ending 23] [[a number ending 56]]');
  });

  it('leaves a count after a mark as written', () => {
    expect(maskEveryNumber('texted +44 7700 900123 / 45678 texts')).toBe('texted +[a number ending 23] / 45678 texts');
  });

  it('masks a number an app wrote inside a mark of its own', () => {
    expect(maskEveryNumber('[a number ending 07700 900123]')).toBe('[a number ending [a number ending 23]]');
  });
});
