/** The one way the kit shows a number anywhere but the form it was typed into. */
import { isIP } from 'node:net';

/**
 * "+15550100001" -> "•• 01" (a no-break space between): its last two digits, as people read a
 * number they know; enough for a user to recognise it, not to text it.
 */
export function maskDestination(destination: string): string {
  return `••\u00a0${destination.slice(-2)}`;
}

/** The fewest digits a phone number has with its country code (Niue's +683 4002). */
const FEWEST_NUMBER_DIGITS = 7;

/**
 * An IPv4 part, 0 to 255 without a leading zero: "079.123.45.67" (a Swiss number) or "612.345.678"
 * (a Spanish one) is grouped as an address is, but holds a part no address has.
 */
const OCTET = String.raw`(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)`;

/** An IPv4 address or a start of one ("203.0.113"), with a port or a prefix. */
const IPV4_LIKE = new RegExp(String.raw`^${OCTET}(?:\.${OCTET}){0,3}(?::\d{1,5}|\/\d{1,3})?$`);

/**
 * Whether a value is an IP address, with a zone, a port or a prefix: never a phone number's
 * spelling. IPv6 only whole, `[v6]` or bare: its start ("0740:0123:456") is a number's grouping.
 */
function isAddress(value: string): boolean {
  if (IPV4_LIKE.test(value)) return true;
  const bracketed = /^\[([^\]]*)\](?::\d{1,5})?$/.exec(value)?.[1];
  const bare = bracketed ?? value.replace(/\/\d{1,3}$/, '');
  return isIP(bare.replace(/%[\w.-]*$/, '')) !== 0;
}

/** Whether a value may be a phone number: as many digits as one, and no IP address. */
export function mayBePhoneNumber(value: string): boolean {
  const digits = value.match(/\p{Nd}/gu)?.length ?? 0;
  return digits >= FEWEST_NUMBER_DIGITS && !isAddress(value);
}

/** A request path shown on a page, each part that may be a phone number masked ("/phones/•• 23"). */
export function maskNumbersInPath(path: string): string {
  return path.replace(/[^/?&=;]+/g, (part) => (mayBePhoneNumber(part) ? maskDestination(part) : part));
}

/** What a message says instead of a value that may be a phone number. */
export const NOT_REPEATED = 'a value not repeated here, as it may be a phone number';

/**
 * A value an error message names back (a country, an address), quoted, unless it may be a phone
 * number: a number typed where another value goes is never repeated.
 */
export function quotedUnlessNumber(value: string): string {
  return mayBePhoneNumber(value) ? NOT_REPEATED : JSON.stringify(value);
}

/** A value an error message names back unquoted (a count, hours), unless it may be a phone number. */
export function namedUnlessNumber(value: unknown): string {
  const text = String(value);
  return mayBePhoneNumber(text) ? NOT_REPEATED : text;
}
