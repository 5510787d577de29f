/**
 * The phone numbers of a run (those it typed, those your app said it holds) are masked in what the
 * audit reports, as the kit masks them: a number is shown in full only where the user typed it, and
 * evidence quoting an answer or a URL (a start sent as a GET, its form in the query) may carry one in
 * any spelling (grouped, URL-encoded, national).
 */
import { GROUP_MARKS, isIpv4Address } from '../../middleware/numbers/mask-number.ts';
import { replaceInSpelled } from './spelled-text.ts';

/**
 * What may stand between a number's digits: every mark the kit's own masking reads between a
 * number's groups (spaces, dots, dashes of any width, brackets, slashes, a plus, tildes, their
 * full-width forms, and every invisible format mark: a zero-width (non-)joiner a page puts in to keep
 * a phone from linking the number, the direction marks of a right-to-left page), and their encodings.
 */
const SEPARATOR = String.raw`(?:[${GROUP_MARKS}]|%20|%2B|%28|%29|%2F|&nbsp;|&#160;)`;

/** A run of digits with separators between them, as long as a phone number may be. */
const DIGIT_RUN = new RegExp(String.raw`\d(?:${SEPARATOR}*\d){6,}`, 'giu');

const SEPARATORS = new RegExp(SEPARATOR, 'giu');

/** A separator encoded once more, as in a URL inside a parameter (`%2520`). */
const REENCODED_SEPARATOR = String.raw`%25(?:25)*(?:20|2B|28|29|2F)`;

/**
 * A pattern finding `digits` (a number's national digits) in any spelling the masking reads:
 * grouped by any separator, URL-encoded once or twice, HTML's non-breaking space between them.
 */
export function anySpellingOf(digits: string): RegExp {
  return new RegExp(digits.split('').join(`(?:${SEPARATOR}|${REENCODED_SEPARATOR})*`), 'iu');
}

const DIGIT = /\p{Nd}/u;

/**
 * `text` with the digits of every script written as ASCII ones ("٠٧٧٠٠" as "07700"). Unicode
 * keeps each script's digits in runs of 0 to 9 in order: a digit's value is its place in its run.
 */
export function asciiDigits(text: string): string {
  return text.replace(/(?![0-9])\p{Nd}/gu, (digit) => {
    const at = digit.codePointAt(0) ?? 0;
    let zero = at;
    while (DIGIT.test(String.fromCodePoint(zero - 1))) zero -= 1;
    return String((at - zero) % 10);
  });
}

/** The national digits a number is recognised by (its last ten), however it was written. */
function nationalDigits(phone: string): string {
  return phone.replace(/\D/g, '').slice(-10);
}

export class NumberMask {
  readonly #known = new Set<string>();

  /** Masks `phone` from now on (one with fewer than seven digits is no number to mask). */
  add(phone: string): void {
    const digits = nationalDigits(phone);
    if (digits.length >= 7) this.#known.add(digits);
  }

  /** `text` with every known number, in any spelling, shown by its last two digits. */
  mask(text: string): string {
    if (this.#known.size === 0) return text;
    return text.replace(DIGIT_RUN, (run) => {
      const digits = run.replace(SEPARATORS, '').replace(/\D/g, '');
      for (const known of this.#known) {
        if (digits.includes(known)) return `[a number ending ${known.slice(-2)}]`;
      }
      return run;
    });
  }
}

/** The national digits of every number the audit types (+44 7400 1xxxxx): the range it draws from. */
const TYPED_RANGE = /74001\d{5}/;

/**
 * `text` with every number of the range the audit types masked, in any spelling: for what is said
 * outside a run's report (an error of your app that quotes the number it was sent).
 */
export function maskTypedRange(text: string): string {
  return text.replace(DIGIT_RUN, (run) => {
    const digits = run.replace(SEPARATORS, '').replace(/\D/g, '');
    const found = TYPED_RANGE.exec(digits);
    return found === null ? run : `[a number ending ${found[0].slice(-2)}]`;
  });
}

/**
 * A number in international form after its `+`, or `%2B` (`%252B` in a URL inside a parameter,
 * encoded again): 7 to 15 digits, separators between, as the shortest real numbers have 7 with
 * their country code (Niue's +683 4002).
 */
const INTERNATIONAL = new RegExp(
  String.raw`(?<=\+|%(?:25)*2B)\d(?:(?:${SEPARATOR}|${REENCODED_SEPARATOR})*\d){6,14}(?!\d)`,
  'giu',
);

/**
 * `text` with every number written in international form masked, whoever holds it: for what is
 * said outside a run's report (an error of your app quoting a user's own number, one the audit
 * never typed nor knows).
 */
export function maskInternational(text: string): string {
  return text.replace(INTERNATIONAL, (run) => `[a number ending ${run.replace(/\D/g, '').slice(-2)}]`);
}

/** `text` with every number written in international form masked, its digits percent-encoded too. */
function maskInternationalSpelled(text: string): string {
  return replaceInSpelled(text, INTERNATIONAL, (run) => `[a number ending ${run.replace(/\D/g, '').slice(-2)}]`);
}

/**
 * A run of digits of any script (the full-width digits of Chinese and Japanese pages, Arabic-Indic
 * ones, as the kit reads them) with separators between them, encoded once or again, as long as a
 * phone number may be.
 */
const ANY_RUN = new RegExp(String.raw`\p{Nd}(?:(?:${SEPARATOR}|${REENCODED_SEPARATOR})*\p{Nd}){6,}`, 'giu');

/** A separator written as an entity or percent-encoded, once or again: its digits are none of the number's. */
const ENCODED_SEPARATORS = /%(?:25)*(?:20|2B|28|29|2F)|&nbsp;|&#160;/gi;

/**
 * `text` with every number masked, whoever holds it and however it is written: in international
 * form, and in a national one ("07700 900123", "(202) 555-0143") as a run of seven digits or more
 * that is no whole IPv4 address (the one the kit spares too).
 */
export function maskEveryNumber(text: string): string {
  // A mark's digits (and its bracket, a separator) are no part of a number written after it. A
  // number is judged by what it spells: a URL or a page may percent-encode its digits.
  return maskInternationalSpelled(text)
    .split(MARK)
    .map((part, index) => (index % 2 === 1 ? part : maskNationalRuns(part)))
    .join('');
}

/** A number's mark, as the masking writes it: two digits at most (an app's look-alike holding more is no mark). */
const MARK = /(\[a number ending \p{Nd}{0,2}\])/u;

/** `text` with every run of seven digits or more that is no IPv4 address masked. */
function maskNationalRuns(text: string): string {
  return replaceInSpelled(text, ANY_RUN, (run) => {
    const plain = run.replace(ENCODED_SEPARATORS, ' ');
    const digits = plain.match(/\p{Nd}/gu) ?? [];
    return isIpv4Address(plain) ? undefined : `[a number ending ${digits.slice(-2).join('')}]`;
  });
}
