/**
 * The key an operator's block, release or clear names (`kit.pumping`, the `fraud` command), checked
 * as the counters key a start: a mistake is refused before anything is written, never kept as a
 * rule no start matches, and a value that may be a phone number is never quoted back.
 */
import { isIP } from 'node:net';
import { KitError, KitErrorCode, redactSecretFragments } from '../errors.ts';
import { DEFAULT_IPV6_SUBNET, ipBudgetKey, UNPARSEABLE_IP_KEY } from '../limits/limit-keys.ts';
import { quotedUnlessNumber } from '../numbers/mask-number.ts';
import { describeStoredNumber, numberLength, readStoredNumber } from '../numbers/parse-number.ts';
import type { PumpingKey } from '../store/types.ts';
import { blockOf, blockOfNumber, isCountedCountry } from './pumping-keys.ts';
import { BLOCK_DIGITS } from './pumping-rules.ts';

/** One key for an operator's block or release: exactly one of them. */
export interface PumpingTarget {
  country?: string;
  /** A number block: the E.164 number without its last three digits, e.g. '+33612345'. */
  block?: string;
  /**
   * A client address: IPv4, or IPv6 standing for its prefix as the counters key it (its /64 unless
   * `limits.ipv6Subnet` says otherwise: '2001:db8:1:2::', or '2001:db8:1:2::/64').
   */
  address?: string;
  user?: string;
}

/**
 * An operator's address as the counters key a start from it: an IPv6 address (or its prefix) as
 * its prefix of `ipv6Subnet` bits (the start limits' `limits.ipv6Subnet`, /64 by default), an
 * IPv4-mapped one as its IPv4 address. One that is no address is refused: it would never match.
 */
function addressKey(address: string, ipv6Subnet: number): string {
  // Only an IPv6 address has a prefix: '203.0.113.7/64' is a mistake, not the address.
  const trimmed = address.trim();
  const suffix = `/${ipv6Subnet}`;
  const withoutPrefix = trimmed.endsWith(suffix) ? trimmed.slice(0, -suffix.length) : trimmed;
  const bare = isIP(withoutPrefix) === 6 ? withoutPrefix : trimmed;
  const key = ipBudgetKey(bare, ipv6Subnet);
  if (key === UNPARSEABLE_IP_KEY || bare.includes('/')) {
    throw new KitError(
      KitErrorCode.InvalidOptions,
      `address must be an IPv4 address or an IPv6 address (which stands for its /${ipv6Subnet}), such as '203.0.113.7' or '2001:db8:1:2::'; got ${quotedUnlessNumber(address)}.`,
    );
  }
  return key;
}

/**
 * A whole number given as a block would be kept as a rule no start ever matches (a block is the
 * number without its last three digits), the operator told it was blocked, the number stored.
 * Refused when the number is valid and no number extends it by three digits (some countries'
 * numbers vary in length: there, a valid number's start may be a block too).
 */
function checkNotWholeNumber(block: string): void {
  if (describeStoredNumber(block)?.type === undefined || describeStoredNumber(`${block}000`)?.type !== undefined)
    return;
  throw new KitError(
    KitErrorCode.InvalidOptions,
    `block is a number without its last three digits: this is a whole number; its block is ${JSON.stringify(blockOf(block))}.`,
  );
}

/** The most digits a block has: E.164's 15 without the last three. */
const MAX_BLOCK_DIGITS = 15 - BLOCK_DIGITS;

/**
 * A block too short or too long to be a number of its country without its last three digits would
 * be kept as a rule no start matches ('+336123' for French numbers, which have 9 digits after +33),
 * the operator told it was blocked. A country code no country has is kept: numbers of no country
 * are counted by block too. One too long may be a whole number (of a range the metadata does not
 * hold, as test numbers are): never quoted, its block named when it has a whole number's length.
 */
function checkBlockLength(block: string): void {
  // A calling code the metadata does not know has no lengths to judge by, but E.164's bound holds.
  if (block.length - 1 > MAX_BLOCK_DIGITS) {
    throw new KitError(
      KitErrorCode.InvalidOptions,
      `block is a number without its last three digits: this is too long; a block has at most ${MAX_BLOCK_DIGITS} digits, as numbers have at most 15.`,
    );
  }
  const length = numberLength(`${block}000`);
  if (length !== 'TOO_SHORT' && length !== 'TOO_LONG') return;
  const example = "for its country's numbers, such as '+33612345' for +33 6 12 34 56 78";
  const what =
    length === 'TOO_SHORT'
      ? `${JSON.stringify(block)} is too short ${example}`
      : numberLength(block) === undefined
        ? `this is a whole number; its block is ${JSON.stringify(blockOf(block))}`
        : `this is too long ${example}`;
  throw new KitError(KitErrorCode.InvalidOptions, `block is a number without its last three digits: ${what}.`);
}

/**
 * A block one digit too long or too short for its country ('+417812345' for Swiss numbers, which
 * have 9 digits after +41) passes the length check, as its numbers read as no valid length: each is
 * counted under the block of the real number it starts with, or of its first five digits, so the
 * rule would never be read. Refused unless some number of it is counted under it as a start's is
 * (operators only: up to 10^BLOCK_DIGITS readings, most blocks answered by their first).
 */
function checkCountedUnder(block: string): void {
  for (let last = 0; last < 10 ** BLOCK_DIGITS; last++) {
    const number = `${block}${String(last).padStart(BLOCK_DIGITS, '0')}`;
    if (blockOfNumber(readStoredNumber(number)) === block) return;
  }
  throw new KitError(
    KitErrorCode.InvalidOptions,
    `block is a number without its last three digits: no number of this one is counted under it, as it is a digit too long or too short; a block keeps all of a number's digits but its last ${BLOCK_DIGITS}, such as '+33612345' for +33 6 12 34 56 78.`,
  );
}

/**
 * A country a number can belong to, as the counters key it (or ZZ, no country's ranges): any other
 * code would be kept as a rule no start matches ('UK' for the United Kingdom, which is 'GB'), the
 * operator told it was blocked.
 */
function checkCountry(country: string): void {
  if (isCountedCountry(country)) return;
  const hint =
    country === 'UK'
      ? " (the United Kingdom is 'GB')"
      : country === 'EH'
        ? " (Western Sahara's +212 numbers are counted under 'MA')"
        : '';
  throw new KitError(
    KitErrorCode.InvalidOptions,
    `country must be the ISO 3166-1 alpha-2 code of a country with phone numbers, such as 'NG', or 'ZZ' for numbers of none${hint}; got ${quotedUnlessNumber(country)}.`,
  );
}

/**
 * The one key a target names; an operator's mistake is refused before anything is written.
 * `ipv6Subnet`: the prefix an IPv6 client is counted by (the start limits').
 */
export function keyOf(target: PumpingTarget, ipv6Subnet = DEFAULT_IPV6_SUBNET): PumpingKey {
  if (typeof target !== 'object' || target === null) {
    throw new KitError(
      KitErrorCode.InvalidOptions,
      "Name a target: exactly one of country, block, address or user, e.g. { country: 'NG' } or { block: '+33612345' }.",
    );
  }
  const named = (
    [
      ['country', target.country],
      ['block', target.block],
      ['address', target.address],
      ['user', target.user],
    ] as const
  ).filter(([, value]) => value !== undefined);
  const [first] = named;
  if (named.length !== 1 || first === undefined || typeof first[1] !== 'string' || first[1] === '') {
    throw new KitError(
      KitErrorCode.InvalidOptions,
      "Name exactly one of country, block, address or user, e.g. { country: 'NG' } or { block: '+33612345' }.",
    );
  }
  const [dimension, key] = first;
  // A secret pasted where a userRef goes would be stored and shown to every operator who lists rules.
  if (redactSecretFragments(key) !== key) {
    throw new KitError(
      KitErrorCode.InvalidOptions,
      `${dimension} holds the client secret (or part of a secret the kit keeps out of its output), which is never stored nor shown: name the ${dimension} as the counters key it, e.g. a userRef as resolveUser returns it.`,
    );
  }
  if (dimension === 'country') checkCountry(key);
  // An E.164 number's start: its country code never begins with 0. What was given is not quoted:
  // it may be a whole number spelt another way ("+33 6 12 34 56 78", "0033612345678").
  if (dimension === 'block' && !/^\+[1-9]\d{0,13}$/.test(key)) {
    throw new KitError(
      KitErrorCode.InvalidOptions,
      'block must be "+" and digits only (no spaces, dashes or leading 00), not starting with 0, such as \'+33612345\'.',
    );
  }
  if (dimension === 'block') {
    checkNotWholeNumber(key);
    checkBlockLength(key);
    checkCountedUnder(key);
  }
  if (dimension === 'address') return { dimension, key: addressKey(key, ipv6Subnet) };
  // PostgreSQL cannot keep a NUL (SQLite kept it): refused on every store alike, before anything is written.
  if (dimension === 'user' && key.includes('\0')) {
    throw new KitError(
      KitErrorCode.InvalidOptions,
      'user must be a userRef as resolveUser returns it, with no NUL character (as "%00" in a form field decodes to).',
    );
  }
  return { dimension, key };
}
