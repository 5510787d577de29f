/**
 * The keys the start limits count under. An attacker must not get a fresh budget by changing what
 * they cheaply control: one IPv6 host holds a whole /64, and one phone number has many spellings.
 * Destination keys are an HMAC under a server-side key, because a plain hash of a phone number is
 * reversed by enumerating numbers.
 */
import { createHmac, hkdfSync } from 'node:crypto';
import { isIP } from 'node:net';
import { normaliseDestination } from '../numbers/number-spelling.ts';

/** IPv6 clients are counted per /64 by default: one subscriber or host is usually given a whole /64. */
export const DEFAULT_IPV6_SUBNET = 64;

/** Eight 16-bit groups of an IPv6 address (no zone id, embedded IPv4 expanded). */
function ipv6Groups(address: string): number[] {
  let text = address.split('%')[0] ?? '';
  const embedded = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (embedded !== null) {
    const [a, b, c, d] = embedded.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, embedded.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const parse = (part: string | undefined) => (part ? part.split(':').map((group) => parseInt(group, 16)) : []);
  const first = parse(head);
  const last = parse(tail);
  return [...first, ...new Array<number>(8 - first.length - last.length).fill(0), ...last];
}

/**
 * The IPv4 client an IPv6 address stands for, in any spelling (dotted, hex, in full): IPv4-mapped
 * (::ffff:a.b.c.d), IPv4-translated (::ffff:0:a.b.c.d), IPv4-compatible (::a.b.c.d, whose
 * last 32 bits exceed 0xffff, so :: and ::1 stay IPv6) and NAT64's well-known prefix
 * (64:ff9b::a.b.c.d, RFC 6052; as compatible ones, so the prefix 64:ff9b:: an operator names stays
 * IPv6). Keyed by /64, they all shared one budget.
 */
function embeddedIpv4(groups: number[]): string | undefined {
  const zeros = (from: number, to: number) => groups.slice(from, to).every((group) => group === 0);
  const mapped = zeros(0, 5) && groups[5] === 0xffff;
  const translated = zeros(0, 4) && groups[4] === 0xffff && groups[5] === 0;
  const compatible = zeros(0, 6) && groups[6] !== 0;
  const nat64 = groups[0] === 0x64 && groups[1] === 0xff9b && zeros(2, 6) && groups[6] !== 0;
  if (!mapped && !translated && !compatible && !nat64) return undefined;
  const [high = 0, low = 0] = groups.slice(6);
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/** Every client address that does not parse shares this one budget: its raw text never keys a counter. */
export const UNPARSEABLE_IP_KEY = 'unparseable';

/**
 * The address in a client IP as proxies write it: bare, `ip:port` (IPv4) or `[v6]` / `[v6]:port`;
 * undefined when it is none of these. Some proxies append the source port, which would otherwise
 * give every connection a fresh budget.
 */
export function clientAddress(value: string): string | undefined {
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(value);
  const withPort = /^(\d{1,3}(?:\.\d{1,3}){3}):(\d{1,5})$/.exec(value);
  const [address, port] =
    bracketed !== null
      ? [bracketed[1], bracketed[2]]
      : withPort !== null
        ? [withPort[1], withPort[2]]
        : [value, undefined];
  if (address === undefined || (port !== undefined && Number(port) > 65_535)) return undefined;
  const family = isIP(address.split('%')[0] ?? '');
  if (family === 0 || (bracketed !== null && family !== 6)) return undefined;
  return address;
}

/**
 * The address a client IP stands for: a port and a zone id dropped (a zone names the host's
 * interface, not the client), an IPv6 spelling of an IPv4 client as that IPv4 address; undefined
 * when it does not parse. The budgets and the pumping allow-list both read a client by it.
 */
export function clientIpAddress(ip: string): string | undefined {
  const parsed = clientAddress(ip);
  if (parsed === undefined) return undefined;
  const address = parsed.split('%')[0] ?? '';
  if (isIP(address) !== 6) return address;
  return embeddedIpv4(ipv6Groups(address)) ?? address;
}

/**
 * The client's IP budget key: IPv4 (also an IPv6 spelling of one) as is, IPv6 as its `/ipv6Subnet`
 * prefix, a port and a zone id dropped; anything that does not parse shares one bucket.
 */
export function ipBudgetKey(ip: string, ipv6Subnet = DEFAULT_IPV6_SUBNET): string {
  const address = clientIpAddress(ip);
  if (address === undefined) return UNPARSEABLE_IP_KEY;
  if (isIP(address) !== 6) return address;
  const groups = ipv6Groups(address);
  const masked = groups.map((group, index) => {
    const keep = Math.min(16, Math.max(0, ipv6Subnet - index * 16));
    return keep === 0 ? 0 : group & ((0xffff << (16 - keep)) & 0xffff);
  });
  return `${masked.map((group) => group.toString(16)).join(':')}/${ipv6Subnet}`;
}

/** The destination budget key: an HMAC of the normalised number, so counters hold no number. */
export function destinationBudgetKey(destination: string, key: Uint8Array): string {
  return createHmac('sha256', key).update(normaliseDestination(destination)).digest('base64url');
}

/** A key for destination counters derived from another server-side secret (one-way: it reveals nothing of it). */
export function deriveDestinationKey(serverSecret: string): Uint8Array {
  return new Uint8Array(
    hkdfSync('sha256', serverSecret, '', 'hosted-sms-verify-kit start limits: destination key', 32),
  );
}
