/**
 * The hand-written integration's reading of a typed number, as an integrator would write it with
 * libphonenumber-js and the same `max` metadata the kit uses (the smaller sets cannot tell types):
 * the whole input must be one valid number without an extension, read in the default country,
 * refused when its type is one no person reads a code on; then the service's userRef is bound to
 * the user and the number (a keyed HMAC), so a passkey saved for another number cannot answer.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { parsePhoneNumberWithError, type NumberType } from 'libphonenumber-js/max';
import { ENTERED_DEFAULT_COUNTRY } from '../../common.ts';

/** The kit's default refusals: the caller pays these numbers' owners, or nobody reads a text there. */
const REFUSED_TYPES: ReadonlySet<NumberType> = new Set([
  'PREMIUM_RATE',
  'SHARED_COST',
  'TOLL_FREE',
  'UAN',
  'VOICEMAIL',
  'PAGER',
]);
const E164 = /^\+[1-9]\d{6,14}$/;

/** The E.164 number to text, 'invalid' (not a number) or 'refused' (a type the app never texts). */
export function readTypedNumber(input: unknown): string | 'invalid' | 'refused' {
  if (typeof input !== 'string' || input.length > 40) return 'invalid';
  try {
    const parsed = parsePhoneNumberWithError(input, { defaultCountry: ENTERED_DEFAULT_COUNTRY, extract: false });
    if (!parsed.isValid() || parsed.ext !== undefined || !E164.test(parsed.number)) return 'invalid';
    const type = parsed.getType();
    return type !== undefined && REFUSED_TYPES.has(type) ? 'refused' : parsed.number;
  } catch {
    return 'invalid';
  }
}

const refKey = randomBytes(32);

/** The userRef sent to the service for a typed number: one per user and number, revealing neither. */
export function numberBoundRef(user: string, e164: string): string {
  return createHmac('sha256', refKey)
    .update(JSON.stringify([user, e164]))
    .digest('base64url');
}
