/** What one text to a destination costs, by the number's own country (+1 876 is Jamaica, not the US). */
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import type { SmsPrices } from '../config/sms-prices.ts';

/** The country code, or 'ZZ' for a number no country's ranges hold. */
export function countryOf(destination: string): string {
  return parsePhoneNumberFromString(destination)?.country ?? 'ZZ';
}

export function priceOf(prices: SmsPrices, destination: string): { country: string; price: number } {
  const country = countryOf(destination);
  return { country, price: prices.countries[country] ?? prices.default };
}
