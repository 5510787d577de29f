/**
 * Property-based (fast-check): reading typed numbers and the destination policy.
 *  - a valid number of several countries reads the same in every form people write it
 *    (national with the default country, international with "+", with "00", with spaces, dots,
 *    dashes and brackets), always to one E.164, whose own country is the number's;
 *  - anything that is not a number (random text, random digits too short or too long, input past
 *    the length cap, ranges reserved for fiction) is refused, never thrown, never read as a number;
 *  - the policy refuses exactly what its lists say: a refused country or type always, an allow-list
 *    never lets another country through, and a number of an unknown country passes only without one;
 *  - a number of every calling code that is no country's (satellites, international networks) is
 *    refused unless `allowCountries` names 'ZZ'.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import metadata from 'libphonenumber-js/metadata.max.json';
import {
  MAX_ENTERED_LENGTH,
  readEnteredNumber,
  readStoredNumber,
  type ReadNumber,
} from '../../middleware/numbers/parse-number.ts';
import {
  DEFAULT_REFUSED_TYPES,
  PHONE_NUMBER_TYPES,
  refusalOf,
  resolvePolicy,
} from '../../middleware/numbers/destination-policy.ts';

/** Valid numbers (libphonenumber-js 1.13 max metadata): country, calling code, national significant number. */
const NUMBERS = [
  { country: 'FR', code: '33', national: '0', nsn: '612345678' },
  { country: 'DE', code: '49', national: '0', nsn: '15123456789' },
  { country: 'GB', code: '44', national: '0', nsn: '7400123456' },
  { country: 'GG', code: '44', national: '0', nsn: '7911123456' },
  { country: 'US', code: '1', national: '', nsn: '2025550123' },
  { country: 'JM', code: '1', national: '', nsn: '8765550123' },
  { country: 'BE', code: '32', national: '0', nsn: '470123456' },
  { country: 'IN', code: '91', national: '0', nsn: '9123456789' },
] as const;

/** The digits split at random places with the separators people type. */
const spelled = (digits: string) =>
  fc
    .array(fc.constantFrom('', '', ' ', '-', '.', ' '), { minLength: digits.length, maxLength: digits.length })
    .map((seps) => [...digits].map((d, i) => `${i === 0 ? '' : seps[i]}${d}`).join(''));

describe('reading typed numbers', () => {
  it('every form of a valid number reads to its one E.164 and its own country', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...NUMBERS),
        fc.constantFrom('national', 'plus', 'double-zero'),
        fc.nat(),
        (number, form, seed) => {
          const rest = fc.sample(spelled(number.nsn), { numRuns: 1, seed })[0]!;
          const typed =
            form === 'national'
              ? `${number.national}${rest}`
              : form === 'plus'
                ? `+${number.code} ${rest}`
                : `00${number.code} ${rest}`;
          // The default country is the number's own for a national form, any other for the rest.
          const read = readEnteredNumber(typed, form === 'national' ? number.country : 'FR');
          expect(read, typed).toMatchObject({ e164: `+${number.code}${number.nsn}`, country: number.country });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('the "00" form reads to its number whatever the default country, or is refused: never read as another number', () => {
    // Countries whose international prefix is not 00 (011, 0011, 010, 8~10, a carrier's 00xx)
    // would otherwise refuse it; Singapore, Thailand, Korea and Nigeria dial 00x too, so there
    // "0033 6..." could be +36 (Hungary) as well as +33.
    const elsewhere = ['US', 'CA', 'JM', 'AU', 'JP', 'RU', 'BR'] as const;
    const ambiguous = ['SG', 'TH', 'KR', 'NG'] as const;
    fc.assert(
      fc.property(
        fc.constantFrom(...NUMBERS),
        fc.constantFrom(...elsewhere, ...ambiguous),
        fc.nat(),
        (number, country, seed) => {
          const rest = fc.sample(spelled(number.nsn), { numRuns: 1, seed })[0]!;
          const typed = `00${number.code} ${rest}`;
          const read = readEnteredNumber(typed, country);
          if (read !== undefined)
            expect(read, `${typed} (${country})`).toMatchObject({ e164: `+${number.code}${number.nsn}` });
          if ((elsewhere as readonly string[]).includes(country)) expect(read, `${typed} (${country})`).toBeDefined();
        },
      ),
      { numRuns: 300 },
    );
    // With Singapore's default, 003 is an international prefix too: "0033 6 12 34 56 78" is France or Hungary.
    expect(readEnteredNumber('0033 6 12 34 56 78', 'SG')).toBeUndefined();
  });

  it('the "00" form in the other digits and spacing the parser reads (full-width, Arabic-Indic, a no-break space, brackets) is never read as another number either', () => {
    // What a phone's keyboard in Chinese, Japanese or Arabic types, or a copy from a web page: the
    // parser reads these zeros and spaces as "00 ", so the check of the two readings must too.
    const zero = fc.constantFrom('0', '\uff10', '\u0660', '\u06f0');
    const opening = fc.constantFrom(
      ['', ''],
      [' ', ''],
      ['\u00a0', ''],
      ['\u3000', ''],
      ['(', ')'],
      ['\uff08', '\uff09'],
    );
    const ambiguous = ['SG', 'TH', 'KR', 'NG'] as const;
    fc.assert(
      fc.property(
        fc.constantFrom(...NUMBERS),
        fc.constantFrom('US', 'JP', ...ambiguous),
        zero,
        zero,
        opening,
        fc.constantFrom('', ' ', '\u00a0', '-'),
        (number, country, first, second, [open, close], gap) => {
          const typed = `${open}${first}${second}${close}${gap}${number.code} ${number.nsn}`;
          const read = readEnteredNumber(typed, country);
          if (read !== undefined)
            expect(read, `${JSON.stringify(typed)} (${country})`).toMatchObject({
              e164: `+${number.code}${number.nsn}`,
            });
        },
      ),
      { numRuns: 500 },
    );
    for (const typed of [
      '\uff10\uff1033 6 12 34 56 78',
      '\u0660\u066033612345678',
      '\u00a00033612345678',
      '(00)33612345678',
    ]) {
      expect(readEnteredNumber(typed, 'SG'), JSON.stringify(typed)).toBeUndefined();
      expect(readEnteredNumber(typed, 'US'), JSON.stringify(typed)).toMatchObject({ e164: '+33612345678' });
    }
  });

  it('a number pasted with direction marks around it (as phones copy one from their contacts) or typed with a full-width plus reads as without them', () => {
    // LRM, RLM, ALM, embeddings (LRE, RLE, PDF) and isolates (LRI, RLI, FSI, PDI) only say which way to display it.
    const marks = fc.constantFrom(
      '\u200e',
      '\u200f',
      '\u061c',
      '\u202a',
      '\u202b',
      '\u202c',
      '\u2066',
      '\u2067',
      '\u2068',
      '\u2069',
    );
    fc.assert(
      fc.property(fc.constantFrom(...NUMBERS), marks, marks, fc.boolean(), (number, before, after, fullWidth) => {
        const typed = `${before}${fullWidth ? '\uff0b' : '+'}${number.code} ${number.nsn}${after}`;
        expect(readEnteredNumber(typed, 'FR'), JSON.stringify(typed)).toMatchObject({
          e164: `+${number.code}${number.nsn}`,
          country: number.country,
        });
      }),
    );
    // An override shows the digits in another order than they are sent: refused.
    expect(readEnteredNumber('\u202e+33 6 12 34 56 78', 'FR')).toBeUndefined();
    expect(readEnteredNumber('\u202d+33 6 12 34 56 78', 'FR')).toBeUndefined();
  });

  it('a number whose digits are grouped by spaces of any width (narrow no-break, thin, figure) reads as with plain spaces', () => {
    const spaces = fc.constantFrom(' ', '\u00a0', '\u202f', '\u2009', '\u2007', '\u2002', '\u200a', '\u205f', '\u3000');
    fc.assert(
      fc.property(fc.constantFrom(...NUMBERS), spaces, fc.boolean(), (number, space, national) => {
        const groups = number.nsn.match(/.{1,2}/g)!.join(space);
        const typed = national ? `${number.national}${groups}` : `+${number.code}${space}${groups}`;
        expect(readEnteredNumber(typed, national ? number.country : 'FR'), JSON.stringify(typed)).toMatchObject({
          e164: `+${number.code}${number.nsn}`,
          country: number.country,
        });
      }),
    );
  });

  it('text that is not a number (or holds one among other words), digits too short or too long, and input past the cap are refused, never thrown', () => {
    const notNumbers = fc.oneof(
      fc.string({ maxLength: 60 }).filter((s) => !/\d{5}/.test(s)),
      fc.stringMatching(/^\+?\d{1,4}$/),
      fc.stringMatching(/^\+\d{17,30}$/),
      fc.string({ minLength: MAX_ENTERED_LENGTH + 1, maxLength: 10_000 }),
      fc.constant(`+33 6 12 34 56 78${' '.repeat(MAX_ENTERED_LENGTH)}`),
      // The whole input must be the number: one inside other text is not taken out of it.
      fc.constantFrom('call me at +33 6 12 34 56 78', '+33 6 12 34 56 78 please', 'tel: +33 6 12 34 56 78'),
    );
    fc.assert(
      fc.property(notNumbers, fc.constantFrom(undefined, 'FR', 'US', 'GB', 'zz'), (typed, country) => {
        expect(readEnteredNumber(typed, country), typed).toBeUndefined();
      }),
      { numRuns: 500 },
    );
  });

  it('numbers of ranges reserved for fiction are possible but not real: refused', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 0, max: 999 }), (nnnn, nnn) => {
        expect(readEnteredNumber(`+1 555 010 ${String(nnnn).padStart(4, '0')}`, 'US')).toBeUndefined();
        expect(readEnteredNumber(`07700 900${String(nnn).padStart(3, '0')}`, 'GB')).toBeUndefined();
      }),
    );
  });

  it('whatever is typed, a number read is E.164 and belongs to a country', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 50 }), fc.constantFrom(undefined, 'FR', 'US'), (typed, country) => {
        const read = readEnteredNumber(typed, country);
        if (read === undefined) return;
        expect(read.e164).toMatch(/^\+[1-9]\d{6,14}$/);
        expect(read.country).toMatch(/^[A-Z]{2}$/);
      }),
      { numRuns: 500 },
    );
  });
});

describe('the destination policy', () => {
  const countries = fc.constantFrom('FR', 'DE', 'GB', 'US', 'JM', 'BE', 'IN');
  // A number of no country (calling code +881...) has no country; one of a country's code may have none too (+1 555).
  const numberOf = fc
    .record({
      e164: fc.constant('+33612345678'),
      country: fc.option(countries, { nil: undefined }),
      type: fc.option(fc.constantFrom(...PHONE_NUMBER_TYPES), { nil: undefined }),
      noCountry: fc.boolean(),
    })
    .map((n) => ({ ...n, noCountry: n.country === undefined && n.noCountry }));
  // 'ZZ' names numbers of no country in both lists.
  const listed = fc.oneof(countries, fc.constant('ZZ'));
  const lists = fc.record({
    allowCountries: fc.option(fc.uniqueArray(listed, { minLength: 1 }), { nil: undefined }),
    refuseCountries: fc.option(fc.uniqueArray(listed), { nil: undefined }),
    refuseTypes: fc.option(fc.uniqueArray(fc.constantFrom(...PHONE_NUMBER_TYPES)), { nil: undefined }),
    allowTypes: fc.option(fc.uniqueArray(fc.constantFrom(...PHONE_NUMBER_TYPES)), { nil: undefined }),
  });

  it('refuses exactly what its lists say', () => {
    fc.assert(
      fc.property(lists, numberOf, (options, number: ReadNumber) => {
        const reason = refusalOf(resolvePolicy(options), number);
        const { country, type } = number;
        const asListed = country ?? 'ZZ';
        const countryRefused =
          (options.refuseCountries ?? []).some((c) => c === asListed) ||
          (options.allowCountries !== undefined
            ? !options.allowCountries.some((c) => c === asListed)
            : country === undefined && number.noCountry);
        const refusedTypes = [...DEFAULT_REFUSED_TYPES, ...(options.refuseTypes ?? [])].filter(
          (t) => !(options.allowTypes ?? []).includes(t),
        );
        const typeRefused = type !== undefined && refusedTypes.includes(type);
        expect(reason !== undefined).toBe(countryRefused || typeRefused);
        if (countryRefused) expect(reason).toMatch(/country/);
        else if (typeRefused) expect(reason).toBe('type');
      }),
      { numRuns: 1000 },
    );
  });

  it("refuses a number of every calling code that is no country's unless allowCountries names 'ZZ'; fictional ranges of a country's code still pass", () => {
    const codes = Object.keys(metadata.nonGeographic);
    expect(codes).toEqual(expect.arrayContaining(['870', '881', '882', '883']));
    // Every type allowed: only the country is judged here.
    const anyType = { allowTypes: PHONE_NUMBER_TYPES };
    for (const code of codes) {
      const number = readStoredNumber(`+${code}12345678`);
      expect(number, code).toMatchObject({ e164: `+${code}12345678`, country: undefined, noCountry: true });
      expect(refusalOf(resolvePolicy(anyType), number), code).toBe('no_country');
      expect(refusalOf(resolvePolicy({ ...anyType, allowCountries: ['FR', 'ZZ'] }), number), code).toBeUndefined();
      expect(refusalOf(resolvePolicy({ ...anyType, refuseCountries: ['ZZ'] }), number), code).toBe('country');
    }
    for (const typed of ['+881 6 1234 5678', '00870773111632']) {
      expect(refusalOf(resolvePolicy(), readEnteredNumber(typed, 'FR')!), typed).toBe('no_country');
    }
    const fictional = readStoredNumber('+15550100001');
    expect(fictional).toMatchObject({ country: undefined, noCountry: false });
    expect(refusalOf(resolvePolicy(), fictional)).toBeUndefined();
    expect(refusalOf(resolvePolicy({ refuseCountries: ['ZZ'] }), fictional)).toBe('country');
  });

  it("judges a stored number spelt with the international '00' as the number it is texted as, also where 'ZZ' is allowed", () => {
    const everywhere = resolvePolicy({ allowCountries: ['GB', 'FR', 'ZZ'] });
    for (const stored of ['0044 9098 790000', '00449098790000', '(00) 44 9098-790000']) {
      const number = readStoredNumber(stored);
      // Texted as +449098790000, a British premium-rate number: judged as one, not as a number of no country.
      expect(number, stored).toMatchObject({ e164: '+449098790000', country: 'GB', type: 'PREMIUM_RATE' });
      expect(refusalOf(everywhere, number), stored).toBe('type');
    }
    expect(readStoredNumber('0033 6 12 34 56 78')).toMatchObject({ e164: '+33612345678', country: 'FR' });
    expect(refusalOf(everywhere, readStoredNumber('0033 6 12 34 56 78'))).toBeUndefined();
  });

  it('reads a stored number spelt with a full-width plus or digits of another script as the E.164 it is texted as', () => {
    const everywhere = resolvePolicy({ allowCountries: ['GB', 'FR', 'ZZ'] });
    for (const stored of [
      '＋33612345678',
      '＋33 6 12 34 56 78',
      '＋３３６１２３４５６７８',
      '００33612345678',
      '+٣٣٦١٢٣٤٥٦٧٨',
    ]) {
      expect(readStoredNumber(stored), stored).toMatchObject({ e164: '+33612345678', country: 'FR', type: 'MOBILE' });
    }
    // Judged as the premium-rate number it would be texted as, not passed as a number of no country.
    expect(readStoredNumber('＋44 9098 790000')).toMatchObject({ e164: '+449098790000', type: 'PREMIUM_RATE' });
    expect(refusalOf(everywhere, readStoredNumber('００44 9098 790000'))).toBe('type');
  });

  it('by default refuses the types no person reads a code on, as documented, and lets the rest through', () => {
    const policy = resolvePolicy();
    // The documented list, written out: a type dropped from the defaults must fail here.
    const refused = [
      'PREMIUM_RATE',
      'SHARED_COST',
      'PERSONAL_NUMBER',
      'TOLL_FREE',
      'UAN',
      'VOICEMAIL',
      'PAGER',
    ] as const;
    const allowed = ['MOBILE', 'FIXED_LINE', 'FIXED_LINE_OR_MOBILE', 'VOIP'] as const;
    expect([...refused, ...allowed].sort()).toEqual([...PHONE_NUMBER_TYPES].sort());
    fc.assert(
      fc.property(countries, (country) => {
        for (const type of refused)
          expect(refusalOf(policy, { e164: '+1', country, type, noCountry: false })).toBe('type');
        for (const type of allowed) {
          expect(refusalOf(policy, { e164: '+1', country, type, noCountry: false })).toBeUndefined();
        }
      }),
    );
  });
});
