/**
 * The counters' keys of one start: the number's country (from the number itself, so +1 876 is
 * Jamaica; a number with digits after a real one, that real number's), its block, the client address (IPv6 by the prefix the start budgets count it by), the user,
 * and the address with the country (for the countries one address texts).
 */
import { DEFAULT_IPV6_SUBNET, ipBudgetKey } from '../limits/limit-keys.ts';
import {
  isCountryOrNone,
  NO_COUNTRY,
  numberLength,
  numberStartingIt,
  readStoredNumber,
  type ReadNumber,
} from '../numbers/parse-number.ts';
import type { PumpingKey } from '../store/types.ts';
import { BLOCK_DIGITS } from './pumping-rules.ts';

/** A number no country's ranges hold: the token the destination policy names them by too. */
export const UNKNOWN_COUNTRY = NO_COUNTRY;

/**
 * Countries the metadata knows that no number is read as: libphonenumber gives every +212 number,
 * Western Sahara's 528[89] ranges included, to 'MA', whose leading digits [5-8] are tried first.
 */
const COUNTRIES_NO_NUMBER_IS_READ_AS: ReadonlySet<string> = new Set(['EH']);

/**
 * A country the counters can key a start by: one numbers are read as, or UNKNOWN_COUNTRY ('UK' is
 * none: 'GB' is; nor is 'EH', whose numbers are counted under 'MA').
 */
export function isCountedCountry(code: string): boolean {
  return isCountryOrNone(code) && !COUNTRIES_NO_NUMBER_IS_READ_AS.has(code);
}

/** Where one start's text goes and who asked, as the counters key it. */
export interface StartKeys {
  e164: string;
  country: string;
  block: string;
  address: string;
  userRef: string;
  /** In the order the store reads them: country, block, address, user, address with country. */
  keys: PumpingKey[];
}

/** The E.164 number without its last BLOCK_DIGITS digits. */
export function blockOf(e164: string): string {
  return e164.slice(0, Math.max(2, e164.length - BLOCK_DIGITS));
}

/** E.164 numbers have at most 15 digits. */
const MAX_DIGITS = 15;

/**
 * "+" and five digits: shorter than any country's numbers (Austria's and Germany's shortest have
 * six digits with their calling code), so it never holds a whole number.
 */
const SHORT_BLOCK_LENGTH = 6;

/**
 * The number a start is counted as: a stored number the metadata does not hold may be a real number
 * with digits after it ("+447400123456999", the UK mobile +447400123456 and three more), which may
 * still reach it: it is counted as the real number it starts with (its country and its block), so
 * its texts count where that number's do and an operator's block of that country refuses it.
 * Undefined when the number is neither one the metadata holds nor starts with one.
 */
function countedAs(number: ReadNumber): ReadNumber | undefined {
  return number.type !== undefined ? number : numberStartingIt(number.e164);
}

/**
 * The block a start is counted by: the block of the number it is counted as (countedAs), whose
 * last three digits off never leave a real number whole. Failing one, its own block if it has the
 * length of its country's numbers (fictional ranges, ranges newer than the metadata) or a calling
 * code the metadata does not know, within E.164's 15 digits; else its first five digits.
 */
export function blockOfNumber(number: ReadNumber, counted = countedAs(number)): string {
  if (counted !== undefined) return blockOf(counted.e164);
  const digits = number.e164.replace(/\D/g, '').length;
  const length = numberLength(number.e164);
  // A calling code the metadata does not know has no lengths to judge by: its own block, as operators name it.
  if (digits <= MAX_DIGITS && (length === undefined || length === 'INVALID_COUNTRY')) return blockOf(number.e164);
  return number.e164.slice(0, SHORT_BLOCK_LENGTH);
}

/**
 * `read` is the destination as readStoredNumber already read it (the start's destination
 * check did): parsing a number with the full metadata is a start's dearest step. `ipv6Subnet`:
 * the start limits' (`limits.ipv6Subnet`), so both count one client under one address.
 */
export function startKeys(
  destination: string,
  clientIp: string,
  userRef: string,
  read?: ReadNumber,
  ipv6Subnet = DEFAULT_IPV6_SUBNET,
): StartKeys {
  const number = read ?? readStoredNumber(destination);
  const e164 = number.e164;
  const counted = countedAs(number);
  const country = (counted ?? number).country ?? UNKNOWN_COUNTRY;
  const block = blockOfNumber(number, counted);
  const address = ipBudgetKey(clientIp, ipv6Subnet);
  return {
    e164,
    country,
    block,
    address,
    userRef,
    keys: [
      { dimension: 'country', key: country },
      { dimension: 'block', key: block },
      { dimension: 'address', key: address },
      { dimension: 'user', key: userRef },
      { dimension: 'address_country', key: `${address} ${country}` },
    ],
  };
}
