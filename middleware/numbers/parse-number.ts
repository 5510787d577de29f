/**
 * Phone numbers read with libphonenumber-js and its `max` metadata: the smaller `min` set cannot
 * tell a number's type (mobile, premium-rate...), and the destination policy needs the type. Out
 * comes E.164 (what is stored, texted and counted), the number's own country (from its national
 * prefix, so +1 876 is Jamaica, not the US) and its type.
 */
import {
  getCountries,
  getCountryCallingCode,
  isSupportedCountry,
  Metadata,
  parseDigits,
  parsePhoneNumberWithError,
  validatePhoneNumberLength,
  type CountryCode,
  type NumberType,
  type PhoneNumber,
} from 'libphonenumber-js/max';
import { maskNumbersInText } from './mask-number.ts';
import { normaliseDestination } from './number-spelling.ts';
import { isUnplacedNumber } from './unplaced-number.ts';

/** A number's type as the metadata names it (MOBILE, FIXED_LINE, PREMIUM_RATE, ...). */
export type PhoneNumberType = NonNullable<NumberType>;

/** What the kit knows of a number. */
export interface ReadNumber {
  /** E.164: "+33612345678". */
  e164: string;
  /** ISO 3166-1 alpha-2 of the number itself; undefined when no country's ranges hold it. */
  country: string | undefined;
  /** undefined when the metadata cannot tell (a number outside every known range). */
  type: PhoneNumberType | undefined;
  /**
   * Its calling code is no country's: satellite phones and international networks (+881, +870,
   * +882, +883), global service numbers (+800, +808, +979), or a code the metadata does not know
   * at all. False for a number of a country's code outside its known ranges (+1 555 01xx).
   */
  noCountry: boolean;
}

/** The token that names numbers of no country where countries are named (ISO 3166-1 leaves ZZ to users). */
export const NO_COUNTRY = 'ZZ';

/** A country a number can belong to ('UK' is none: 'GB' is), or NO_COUNTRY. */
export function isCountryOrNone(value: unknown): value is string {
  return value === NO_COUNTRY || isKnownCountry(value);
}

const E164 = /^\+[1-9]\d{6,14}$/;

/** Longer input is no phone number (E.164 has at most 15 digits): refused before parsing. */
export const MAX_ENTERED_LENGTH = 40;

/** An ISO 3166-1 alpha-2 code the metadata has numbering rules for ("GB", "FR"). */
export function isKnownCountry(value: unknown): value is CountryCode {
  return typeof value === 'string' && /^[A-Z]{2}$/.test(value) && isSupportedCountry(value);
}

/** Whether the masking of texts (error messages, log lines) leaves at most a masked number's two digits of `typed`. */
function maskedWhole(typed: string): boolean {
  return maskNumbersInText(typed).replace(/\P{Nd}/gu, '').length <= 2;
}

/**
 * A number a person typed ("07700 900123" with GB, "+33 6 12 34 56 78"), or undefined when it
 * cannot be a real number: not a number, too short or long, or outside every range in use.
 */
export function readEnteredNumber(typed: unknown, defaultCountry: string | undefined): ReadNumber | undefined {
  if (typeof typed !== 'string' || typed.length > MAX_ENTERED_LENGTH) return undefined;
  // RFC 3966 parameters: the parser drops a subaddress, and an extension after one, unreported.
  if (typed.includes(';')) return undefined;
  // A spelling the kit's masking of texts leaves whole (marks heaped at its ends, groups spread
  // wide) would be logged whole where an error quotes what the user typed: never read as a number.
  if (!maskedWhole(typed)) return undefined;
  const input = typed.replace(DIRECTION_MARKS, '').replace(SPACE_SEPARATORS, ' ').replaceAll('\uff0b', '+');
  const country = isKnownCountry(defaultCountry) ? defaultCountry : undefined;
  const asTyped = readNumber(input, country);
  const international = afterLeading00(input);
  if (international === undefined) return asTyped;
  // "00…" is "+…" in most countries, not in all: the US dials 011, Australia 0011, and Singapore
  // 001 to 003, so "0033 6…" is France, or Hungary through carrier 003. Where the two readings
  // are different numbers, the code would go to one the user may not have meant: refused.
  const dialled = readNumber(`+${international}`, undefined);
  if (asTyped === undefined || dialled === undefined) return asTyped ?? dialled;
  return asTyped.e164 === dialled.e164 ? asTyped : undefined;
}

/**
 * Marks a phone wraps a number in when it is copied (from contacts, in a right-to-left language):
 * LRM, RLM, ALM, embeddings and isolates, which only say which way to display it. An override
 * (LRO, RLO) shows the digits in another order than the text holds them: left for the parser to refuse.
 */
const DIRECTION_MARKS = /[\u200e\u200f\u061c\u202a-\u202c\u2066-\u2069]/g;

/**
 * Spaces of every width (a narrow no-break space, as French typography and the systems that follow
 * it group digits with, a thin or figure space): the parser reads only a plain, a no-break and an
 * ideographic one between digits, and refused a number typed or pasted with the others.
 */
const SPACE_SEPARATORS = /\p{Zs}/gu;

/**
 * The input after the "00" it opens with (the international call prefix of most countries), or
 * undefined. Read as the parser reads it: zeros in any of its digits (ASCII, full-width as Chinese
 * and Japanese keyboards type them, Arabic-Indic), after or between any spacing and brackets, so
 * "（００）33…" is checked as "0033…" is. Anything else before them (a letter, a "+"): no such prefix.
 */
function afterLeading00(input: string): string | undefined {
  const opening = LEADING_00.exec(input);
  if (opening === null || parseDigits(`${opening[1]}${opening[2]}`) !== '00') return undefined;
  return input.slice(opening[0].length);
}

/** Spacing, brackets, dashes, dots and slashes, as the parser skips them between digits. */
const SPACING =
  '[\\s()\\[\\]\\uff08\\uff09\\uff3b\\uff3d.\\uff0e/\\uff0f~\\u2053\\u223c\\uff5e\\-\\u2010-\\u2015\\u2212\\u30fc\\uff0d\\u00ad\\u200b\\u2060]*';
const LEADING_00 = new RegExp(`^${SPACING}(\\p{Nd})${SPACING}(\\p{Nd})`, 'u');

function readNumber(input: string, country: CountryCode | undefined): ReadNumber | undefined {
  try {
    // extract: false: the whole input must be the number, not merely contain one.
    const parsed = parsePhoneNumberWithError(input, {
      extract: false,
      ...(country === undefined ? {} : { defaultCountry: country }),
    });
    // An extension cannot be texted; E.164 holds at most 15 digits, whatever a range's rules allow.
    if (!parsed.isValid() || parsed.ext !== undefined || !E164.test(parsed.number)) return undefined;
    return readOf(parsed);
  } catch {
    return undefined;
  }
}

function readOf(parsed: PhoneNumber): ReadNumber {
  return { e164: parsed.number, country: parsed.country, type: parsed.getType(), noCountry: parsed.isNonGeographic() };
}

/**
 * A number the app already holds (resolveUser's destination), as far as the metadata knows it.
 * Such numbers are not required to be valid: ranges reserved for fiction (+1 555 01xx,
 * 07700 900xxx) are what apps test with, and the metadata goes stale as ranges open.
 */
export function describeStoredNumber(destination: string): ReadNumber | undefined {
  // The parser's answer for such a number, without its search through every country of the code.
  if (isUnplacedNumber(destination))
    return { e164: destination, country: undefined, type: undefined, noCountry: false };
  try {
    return readOf(parsePhoneNumberWithError(destination));
  } catch {
    return undefined;
  }
}

/**
 * The one reading of a number the app holds: what the destination policy and the SMS pumping rules
 * judge, and what is then texted, stored with the attempt and given to fulfil, so that the number
 * judged is the number sent ("+330612345678" is +33612345678 to all of them). One the metadata cannot
 * read as written is read in the one spelling it is then texted as ("0044 9098 790000" is sent to
 * +449098790000, a premium-rate number, and judged as one); one it cannot read at all belongs to no
 * country it knows, in that spelling. The full-width plus and digits of Chinese and Japanese
 * keyboards, and Arabic-Indic digits, are read as the parser reads them ("＋３３…", "００33…").
 */
export function readStoredNumber(destination: string): ReadNumber {
  const read = describeStoredNumber(destination);
  if (read !== undefined) return read;
  const spelling = normaliseDestination(destination.replaceAll('\uff0b', '+').replace(/\p{Nd}/gu, asciiDigit));
  return (
    (spelling === destination ? undefined : describeStoredNumber(spelling)) ?? {
      e164: spelling,
      country: undefined,
      type: undefined,
      noCountry: true,
    }
  );
}

/**
 * Every start of `e164`, itself not a number the metadata holds, that is one (a real number with
 * digits after it, as "+447400123456" in "+447400123456999"), shortest first, read as it is asked
 * for. Never remembered past the call: a cache would keep users' whole numbers for the life of the
 * process.
 */
export function* numbersStartingIt(e164: string): Generator<ReadNumber> {
  // "+" and 6 digits: the shortest numbers of any country (Austria's, Germany's).
  for (let end = 7; end < e164.length; end++) {
    const start = e164.slice(0, end);
    if (!mayBeWholeNumber(start)) continue;
    const read = describeStoredNumber(start);
    if (read?.type !== undefined) yield read;
  }
}

/** The shortest start of `e164` that is a number the metadata holds (numbersStartingIt), or undefined. */
export function numberStartingIt(e164: string): ReadNumber | undefined {
  for (const start of numbersStartingIt(e164)) return start;
  return undefined;
}

/** What a calling code's countries' numbers can be: their national lengths, and how a national prefix opens them. */
interface CallingCodePlan {
  lengths: Set<number>;
  /**
   * Each country's national prefix for parsing, anchored, as one alternation (one test instead of
   * one per country, 22 for +1): the parser strips or rewrites what it matches.
   */
  prefix: RegExp | undefined;
  /** The metadata did not say (a library version without it): every start is parsed. */
  unknown: boolean;
}

/** Per calling code ("1", "44"); built once, when first read. */
let plans: Map<string, CallingCodePlan> | undefined;

function plansByCallingCode(): Map<string, CallingCodePlan> {
  if (plans !== undefined) return plans;
  const metadata = new Metadata();
  const built = new Map<string, CallingCodePlan & { prefixes: string[] }>();
  for (const country of getCountries()) {
    metadata.selectNumberingPlan(country);
    const code = getCountryCallingCode(country);
    const plan = built.get(code) ?? { lengths: new Set<number>(), prefixes: [], prefix: undefined, unknown: false };
    const numbering = metadata.numberingPlan as
      (NonNullable<Metadata['numberingPlan']> & { nationalPrefixForParsing?: () => string | undefined }) | undefined;
    if (numbering === undefined || typeof numbering.nationalPrefixForParsing !== 'function') plan.unknown = true;
    else {
      for (const length of numbering.possibleLengths()) plan.lengths.add(length);
      const prefix = numbering.nationalPrefixForParsing();
      // One per spelling: the 25 countries of +1 share theirs.
      if (prefix && !plan.prefixes.includes(prefix)) plan.prefixes.push(prefix);
    }
    built.set(code, plan);
  }
  plans = new Map(
    [...built].map(([code, { lengths, prefixes, unknown }]) => [
      code,
      {
        lengths,
        prefix: prefixes.length === 0 ? undefined : new RegExp(prefixes.map((p) => `^(?:${p})`).join('|')),
        unknown,
      },
    ]),
  );
  return plans;
}

/**
 * False when `e164` cannot be a number its metadata types: no country of its calling code has
 * numbers of its length, and no national prefix opens it (the parser would strip or rewrite one,
 * "+41 0 55..." or San Marino's, changing the length). The parse it spares costs tens of
 * microseconds with the `max` metadata. A calling code of no country (+800, +881) is parsed as before.
 */
function mayBeWholeNumber(e164: string): boolean {
  if (!e164.startsWith('+')) return true;
  // Calling codes are prefix-free: the first one found is the number's.
  for (let length = 1; length <= 3; length++) {
    const plan = plansByCallingCode().get(e164.slice(1, 1 + length));
    if (plan === undefined) continue;
    const national = e164.slice(1 + length);
    if (plan.unknown || plan.prefix?.test(national) === true) return true;
    return plan.lengths.has(national.length);
  }
  return true;
}

/** A digit of any script the parser reads (full-width, Arabic-Indic) as ASCII; any other as it is. */
function asciiDigit(digit: string): string {
  return parseDigits(digit) || digit;
}

/** Whether an E.164 number's length is one its country's numbers have: undefined when it is, else why not (TOO_SHORT, TOO_LONG, INVALID_COUNTRY...). */
export function numberLength(e164: string): string | undefined {
  return validatePhoneNumberLength(e164);
}
