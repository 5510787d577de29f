/**
 * The counters' keys of one start: the number's country (from the number itself, so +1 876 is
 * Jamaica), its block, the client address (IPv6 by the prefix the start budgets count it by), the user,
 * and the address with the country (for the countries one address texts).
 */
import { DEFAULT_IPV6_SUBNET, ipBudgetKey } from '../limits/limit-keys.ts';
import { isCountryOrNone, NO_COUNTRY, readStoredNumber, type ReadNumber } from '../numbers/parse-number.ts';
import type { PumpingKey } from '../store/types.ts';
import { BLOCK_DIGITS } from './pumping-rules.ts';

/** A number no country's ranges hold: the token the destination policy names them by too. */
export const UNKNOWN_COUNTRY = NO_COUNTRY;

/** A country the counters can key a start by: one numbers belong to, or UNKNOWN_COUNTRY ('UK' is none: 'GB' is). */
export function isCountedCountry(code: string): boolean {
  return isCountryOrNone(code);
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
  const country = number.country ?? UNKNOWN_COUNTRY;
  const block = blockOf(e164);
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
