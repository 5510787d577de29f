/**
 * Property-based (fast-check): a stored number of a calling code several countries share (+1, +7,
 * +44, +590...) reads as the parser reads it, although one that no country of its code holds (the
 * fictional +1 555 range apps test with) is answered without the parser's search through every
 * country. Checked against the parser itself, for numbers near each such country's own (its
 * example numbers, their starts, their last digits changed, digits after them) and for random digits.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  getCountries,
  getCountryCallingCode,
  getExampleNumber,
  parsePhoneNumberWithError,
  type CountryCode,
} from 'libphonenumber-js/max';
import examples from 'libphonenumber-js/mobile/examples';
import { describeStoredNumber } from '../../middleware/numbers/parse-number.ts';
import { isUnplacedNumber } from '../../middleware/numbers/unplaced-number.ts';

/** The parser's own reading, as the kit read every stored number before. */
function parsed(destination: string) {
  try {
    const number = parsePhoneNumberWithError(destination);
    return {
      e164: number.number,
      country: number.country,
      type: number.getType(),
      noCountry: number.isNonGeographic(),
    };
  } catch {
    return undefined;
  }
}

const byCode = new Map<string, CountryCode[]>();
for (const country of getCountries()) {
  const code = getCountryCallingCode(country);
  byCode.set(code, [...(byCode.get(code) ?? []), country]);
}
const sharedCodes = [...byCode].filter(([, countries]) => countries.length > 1).map(([code]) => code);
const sharedExamples = [...byCode]
  .filter(([, countries]) => countries.length > 1)
  .flatMap(([, countries]) => countries)
  .flatMap((country) => {
    const example = getExampleNumber(country, examples);
    return example === undefined ? [] : [example.number as string];
  });
const digits = (min: number, max: number) =>
  fc.array(fc.integer({ min: 0, max: 9 }), { minLength: min, maxLength: max }).map((d) => d.join(''));

describe('a stored number of a calling code several countries share', () => {
  it('reads as the parser reads it, near every such country’s numbers and for random digits', () => {
    const example = fc.constantFrom(...sharedExamples);
    const stored = fc.oneof(
      fc.tuple(fc.constantFrom(...sharedCodes), digits(4, 12)).map(([code, more]) => `+${code}${more}`),
      fc.tuple(example, fc.integer({ min: 1, max: 7 }), digits(1, 7)).map(([n, cut, more]) => n.slice(0, -cut) + more),
      fc
        .tuple(example, fc.integer({ min: 3, max: 7 }), digits(3, 10))
        .map(([n, keep, more]) => n.slice(0, keep) + more),
      fc.tuple(example, digits(1, 3)).map(([n, more]) => n + more),
      digits(7, 7).map((more) => `+1555${more}`),
    );
    fc.assert(
      fc.property(stored, (number) => {
        expect(describeStoredNumber(number)).toEqual(parsed(number));
      }),
      { numRuns: 20000 },
    );
  });

  it('is answered without the parser for the fictional +1 555 range, and left to it for real numbers', () => {
    expect(isUnplacedNumber('+15550100001')).toBe(true);
    expect(describeStoredNumber('+15550100001')).toEqual({
      e164: '+15550100001',
      country: undefined,
      type: undefined,
      noCountry: false,
    });
    // Real numbers of +1 (the US, Jamaica), of +44 (Jersey by its leading digits), and a national prefix after +1.
    for (const real of ['+12025550123', '+18765550123', '+447797123456', '+115550100001']) {
      expect(isUnplacedNumber(real)).toBe(false);
      expect(describeStoredNumber(real)).toEqual(parsed(real));
    }
    expect(describeStoredNumber('+18765550123')).toMatchObject({ country: 'JM' });
    // A code of one country, or of none, is the parser's to read.
    expect(isUnplacedNumber('+33999999999')).toBe(false);
    expect(isUnplacedNumber('+80012345678')).toBe(false);
  });
});
