/**
 * Property-based (fast-check): the start of a stored number with digits after a real one (what the
 * destination policy and the SMS pumping rules judge it as) is the one reading every start of it
 * finds, although most starts are no longer parsed: those whose length no country of their calling
 * code has numbers of, and that no national prefix opens, are skipped. Checked against parsing
 * every start, for digits after each country's numbers, after a national prefix written past the
 * calling code ("+41 0 55..."), after San Marino's code (whose parser rewrites six digits into
 * ten), after calling codes of no country, and for random digits.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { getCountries, getCountryCallingCode, getExampleNumber } from 'libphonenumber-js/max';
import examples from 'libphonenumber-js/mobile/examples';
import { describeStoredNumber, numberStartingIt, numbersStartingIt } from '../../middleware/numbers/parse-number.ts';

/** The reading before starts were skipped: every start parsed, shortest first. */
function everyStartParsed(e164: string) {
  for (let end = 7; end < e164.length; end++) {
    const start = describeStoredNumber(e164.slice(0, end));
    if (start?.type !== undefined) return start;
  }
  return undefined;
}

const mobiles = getCountries().flatMap((country) => {
  const example = getExampleNumber(country, examples);
  return example === undefined ? [] : [{ number: example.number, code: `+${getCountryCallingCode(country)}` }];
});
const digits = (min: number, max: number) =>
  fc.array(fc.integer({ min: 0, max: 9 }), { minLength: min, maxLength: max }).map((d) => d.join(''));
const NO_COUNTRY_CODES = ['+800', '+808', '+870', '+878', '+881', '+882', '+883', '+888', '+979'];

describe('the start of a stored number with digits after a real one', () => {
  it('is what parsing every start of it finds, for digits after any country’s numbers, national prefixes and codes of no country', () => {
    const mobile = fc.constantFrom(...mobiles);
    const stored = fc.oneof(
      fc.tuple(mobile, digits(1, 5)).map(([m, more]) => `${m.number}${more}`),
      fc
        .tuple(mobile, fc.integer({ min: 2, max: 6 }), digits(4, 12))
        .map(([m, keep, more]) => m.number.slice(0, keep) + more),
      fc.tuple(mobile, digits(5, 12)).map(([m, more]) => `${m.code}0${more}`),
      fc.tuple(fc.constantFrom(...NO_COUNTRY_CODES), digits(5, 12)).map(([code, more]) => `${code}${more}`),
      digits(7, 15).map((more) => `+${more}`),
    );
    fc.assert(
      fc.property(stored, (number) => {
        expect(numberStartingIt(number)).toEqual(everyStartParsed(number));
      }),
      { numRuns: 4000 },
    );
  });

  it('finds the numbers the parser reads only past a national prefix or through a rewrite', () => {
    // "+41 0 55 297 86 01" and San Marino's 6-digit national form, each with more digits after.
    expect(numberStartingIt('+4105529786014')).toMatchObject({ e164: '+41552978601', country: 'CH' });
    expect(numberStartingIt('+3789988127')).toMatchObject({ e164: '+3780549998812', country: 'SM' });
    expect(numberStartingIt('+449098790000123')).toMatchObject({ e164: '+449098790000', type: 'PREMIUM_RATE' });
    expect(numberStartingIt('+15551234567')).toBeUndefined();
  });

  it('lists every start that is a number, shortest first: the premium-rate number after a landline it starts with', () => {
    // +353 1520 123456 is Irish premium-rate; +353 1 520 1234 and +353 1 520 12345 Dublin landlines.
    const starts = [...numbersStartingIt('+35315201234560')].map((n) => `${n.e164} ${n.type}`);
    expect(starts).toEqual(['+35315201234 FIXED_LINE', '+353152012345 FIXED_LINE', '+3531520123456 PREMIUM_RATE']);
    expect([...numbersStartingIt('+15551234567')]).toEqual([]);
  });
});
