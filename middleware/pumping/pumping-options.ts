/**
 * The `pumping` option of the kit: the mode, what is always allowed, the thresholds, and the
 * app's challenge. Checked once; the resolved form is what the start's check reads.
 */
import { BlockList, isIP } from 'node:net';
import type { Request } from 'express';
import { clientIpAddress } from '../limits/limit-keys.ts';
import { isCountedCountry } from './pumping-keys.ts';
import { DEFAULT_THRESHOLDS, type PumpingThresholds, type Thresholds } from './pumping-rules.ts';

/** The app's own challenge (a CAPTCHA such as Turnstile or hCaptcha): true when the request passed it. */
export interface PumpingChallenge {
  /** Reads the challenge's answer from the start request (e.g. a form field) and checks it with its provider. */
  verify(req: Request): boolean | Promise<boolean>;
}

/** Starts the rules on the counts never refuse (they are still counted); an operator's block still does. */
export interface PumpingAllowList {
  /** ISO 3166-1 alpha-2 codes, e.g. ['GB']. */
  countries?: readonly string[];
  /** E.164 prefixes, e.g. ['+44790']: every number starting with one. */
  numberPrefixes?: readonly string[];
  /** Client addresses or ranges in CIDR notation, e.g. ['203.0.113.0/24', '2001:db8::/32']. */
  addresses?: readonly string[];
  /** userRefs, e.g. your support staff's. */
  users?: readonly string[];
}

/** Options of the SMS pumping rules (`pumping`). */
export interface PumpingOptions {
  /**
   * 'record' (default): a start that trips a rule is sent, and recorded and logged as a warning;
   * 'refuse': it is refused (429, nothing sent, no budget spent), or offered `challenge`;
   * 'off': nothing is counted. An operator's block refuses in 'record' mode too.
   */
  mode?: 'record' | 'refuse' | 'off';
  alwaysAllow?: PumpingAllowList;
  /** Per kind of key; each left out keeps its default. */
  thresholds?: Partial<{
    country: Partial<Thresholds>;
    block: Partial<Thresholds>;
    address: Partial<Thresholds>;
    addressCountries: number;
  }>;
  /** Offered instead of a refusal: a start that passes it is sent. */
  challenge?: PumpingChallenge;
}

export interface ResolvedPumping {
  mode: 'record' | 'refuse' | 'off';
  thresholds: PumpingThresholds;
  allows(start: { country: string; e164: string; ip: string; userRef: string }): boolean;
  challenge: PumpingChallenge | undefined;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The keys of each group of `pumping`. A key that is no option would be ignored (a misspelt
 * allow-list allows nothing): the options' own check reports any other (options/options-pumping.ts).
 */
export const PUMPING_OPTION_KEYS = {
  pumping: ['mode', 'alwaysAllow', 'thresholds', 'challenge'],
  alwaysAllow: ['countries', 'numberPrefixes', 'addresses', 'users'],
  thresholds: ['country', 'block', 'address', 'addressCountries'],
  /** Of each kind of thresholds: `country`, `block`, `address`. */
  kind: ['dailyFloor', 'hourlyFloor', 'unverifiedPerVerified'],
} as const;

/** The kinds of thresholds, each a group of PUMPING_OPTION_KEYS.kind. */
export const THRESHOLD_KINDS = ['country', 'block', 'address'] as const;

function stringList(problems: string[], name: string, value: unknown, valid: (s: string) => boolean): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string' && valid(v))) {
    problems.push(`\`pumping.alwaysAllow.${name}\` must be a list of ${name}, e.g. ${EXAMPLES[name]}.`);
    return [];
  }
  return value as string[];
}

const EXAMPLES: Record<string, string> = {
  countries: "['GB', 'FR']",
  numberPrefixes: "['+44790']",
  addresses: "['203.0.113.0/24', '2001:db8::/32']",
  users: "['support-1']",
};

function addressRange(entry: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | undefined {
  const [address = '', bits, ...more] = entry.split('/');
  if (more.length > 0) return undefined;
  const version = isIP(address);
  if (version === 0) return undefined;
  const max = version === 4 ? 32 : 128;
  // Digits only: Number('') is 0, so '203.0.113.7/' would allow every address.
  if (bits !== undefined && !/^\d{1,3}$/.test(bits)) return undefined;
  const prefix = bits === undefined ? max : Number(bits);
  if (prefix > max) return undefined;
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

function allowList(problems: string[], given: unknown): ResolvedPumping['allows'] {
  if (given === undefined) return () => false;
  if (!isRecord(given)) {
    problems.push('`pumping.alwaysAllow` must be { countries, numberPrefixes, addresses, users }.');
    return () => false;
  }
  const countries = new Set(stringList(problems, 'countries', given.countries, isCountedCountry));
  const prefixes = stringList(problems, 'numberPrefixes', given.numberPrefixes, (s) => /^\+\d{1,14}$/.test(s));
  const ranges = stringList(problems, 'addresses', given.addresses, (s) => addressRange(s) !== undefined);
  const users = new Set(stringList(problems, 'users', given.users, (s) => s !== ''));
  const blockList = new BlockList();
  for (const range of ranges.map(addressRange)) {
    if (range !== undefined) blockList.addSubnet(range.address, range.prefix, range.family);
  }
  return ({ country, e164, ip, userRef }) => {
    if (countries.has(country) || users.has(userRef) || prefixes.some((p) => e164.startsWith(p))) return true;
    // The address the rules count the client by: with a port, a zone or as IPv6 spelling an IPv4 client.
    const address = clientIpAddress(ip);
    return address !== undefined && blockList.check(address, isIP(address) === 4 ? 'ipv4' : 'ipv6');
  };
}

function thresholds(problems: string[], given: unknown): PumpingThresholds {
  if (given === undefined) return DEFAULT_THRESHOLDS;
  if (!isRecord(given)) {
    problems.push('`pumping.thresholds` must be { country, block, address, addressCountries }.');
    return DEFAULT_THRESHOLDS;
  }
  const positive = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v > 0;
  const one = (kind: (typeof THRESHOLD_KINDS)[number]): Thresholds => {
    const own = given[kind];
    if (own !== undefined && !isRecord(own)) {
      problems.push(
        `\`pumping.thresholds.${kind}\` must be { dailyFloor, hourlyFloor, unverifiedPerVerified }, or omitted.`,
      );
    }
    const merged = { ...DEFAULT_THRESHOLDS[kind], ...(isRecord(own) ? own : {}) };
    if (![merged.dailyFloor, merged.hourlyFloor, merged.unverifiedPerVerified].every(positive)) {
      problems.push(
        `\`pumping.thresholds.${kind}\` needs positive numbers: { dailyFloor: 20, hourlyFloor: 3, unverifiedPerVerified: 0.5 }.`,
      );
    }
    return merged;
  };
  const addressCountries = given.addressCountries ?? DEFAULT_THRESHOLDS.addressCountries;
  if (!positive(addressCountries))
    problems.push('`pumping.thresholds.addressCountries` must be a positive number, e.g. 3.');
  return {
    country: one('country'),
    block: one('block'),
    address: one('address'),
    addressCountries: Number(addressCountries),
  };
}

/**
 * The resolved `pumping` option, or the problems found (each naming the fix). `counted`: the
 * kit's store keeps the counters; without them a mode asked for would silently protect nothing.
 */
export function resolvePumping(given: unknown, counted = true): { resolved: ResolvedPumping; problems: string[] } {
  const problems: string[] = [];
  const options = given === undefined ? {} : given;
  if (!isRecord(options)) {
    problems.push("`pumping` must be { mode, alwaysAllow, thresholds, challenge }, e.g. { mode: 'refuse' }.");
  }
  const record = isRecord(options) ? options : {};
  const mode = record.mode ?? 'record';
  if (mode !== 'record' && mode !== 'refuse' && mode !== 'off') {
    problems.push(`\`pumping.mode\` must be 'record', 'refuse' or 'off'.`);
  }
  // Asked for by name only: the default mode on such a store stays quiet, as before.
  if (!counted && (record.mode === 'refuse' || record.mode === 'record')) {
    problems.push(
      `\`pumping.mode: '${mode}'\` needs a store that keeps the SMS pumping counters (the kit's SQLite or PostgreSQL store, or one with \`pumping\`); yours has none: set \`pumping: { mode: 'off' }\` to go without them.`,
    );
  }
  const challenge = record.challenge;
  if (challenge !== undefined && (!isRecord(challenge) || typeof challenge.verify !== 'function')) {
    problems.push('`pumping.challenge` must be { verify(req) } returning true when the request passed your CAPTCHA.');
  }
  return {
    resolved: {
      mode: mode as ResolvedPumping['mode'],
      thresholds: thresholds(problems, record.thresholds),
      allows: allowList(problems, record.alwaysAllow),
      challenge:
        isRecord(challenge) && typeof challenge.verify === 'function'
          ? (challenge as unknown as PumpingChallenge)
          : undefined,
    },
    problems,
  };
}
