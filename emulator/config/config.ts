/** Emulator configuration: registered clients and environment variables, validated with messages that name the fix. */
import { isIP } from 'node:net';
import { NO_RATE_LIMITS, parseRateLimitUpdate, type RateLimitSettings } from './rate-limit-settings.ts';

export type Platform = 'web' | 'mobile';

export interface EmulatorClient {
  clientId: string;
  secret: string;
  /** The client's ONE registered return URL (a deep link for a mobile app), compared byte for byte. */
  returnUrl: string;
  /** Kind of app registered; only checks that `returnUrl` has a fitting scheme. Default `web`. */
  platform?: Platform;
}

export const DEFAULT_PORT = 4010;

/** The client an emulator registers when given none: `demo-client`, returning to http://localhost:3000/verify/return (the demo's defaults). */
export const DEFAULT_CLIENT: EmulatorClient = {
  clientId: 'demo-client',
  secret: 'demo-secret-change-me',
  returnUrl: 'http://localhost:3000/verify/return',
  platform: 'web',
};

const WEB_SCHEMES = new Set(['http', 'https']);
// Schemes a browser handles itself; a mobile deep link must use the app's own custom scheme.
const NON_APP_SCHEMES = new Set([
  'http',
  'https',
  'javascript',
  'data',
  'file',
  'blob',
  'about',
  'ftp',
  'ws',
  'wss',
  'mailto',
  'tel',
  'sms',
]);
const SCHEME = /^([a-zA-Z][a-zA-Z0-9+.-]*):/;

export function schemeOf(url: string): string | undefined {
  return SCHEME.exec(url)?.[1]?.toLowerCase();
}

/** `platform` changes only which return URL schemes are accepted: web takes http(s), mobile a custom-scheme deep link. */
export function schemeFitsPlatform(url: string, platform: Platform): boolean {
  const scheme = schemeOf(url);
  if (scheme === undefined) return false;
  return platform === 'web' ? WEB_SCHEMES.has(scheme) : !NON_APP_SCHEMES.has(scheme);
}

export function isPlatform(value: unknown): value is Platform {
  return value === 'web' || value === 'mobile';
}

/** Validates a list of clients; throws an Error whose message says which entry is wrong and how. */
export function validateClients(value: unknown, source = 'clients'): EmulatorClient[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw new Error(`${source} must be a non-empty JSON array of {clientId, secret, returnUrl, platform?}.`);
  }
  const seen = new Set<string>();
  return value.map((entry: unknown, index) => {
    const where = `${source}[${index}]`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      throw new Error(`${where} must be an object {clientId, secret, returnUrl, platform?}.`);
    }
    const { clientId, secret, returnUrl, platform = 'web' } = entry as Record<string, unknown>;
    if (typeof clientId !== 'string' || clientId === '' || clientId.includes(':')) {
      throw new Error(`${where}.clientId must be a non-empty string without ":" (it is the Basic auth user name).`);
    }
    if (seen.has(clientId))
      throw new Error(`${where}.clientId "${clientId}" is registered twice; client ids must be unique.`);
    seen.add(clientId);
    if (typeof secret !== 'string' || secret === '') {
      throw new Error(`${where}.secret must be a non-empty string.`);
    }
    if (!isPlatform(platform)) throw new Error(`${where}.platform must be "web" or "mobile" (default "web").`);
    if (typeof returnUrl !== 'string' || !URL.canParse(returnUrl)) {
      throw new Error(`${where}.returnUrl must be an absolute URL, e.g. http://localhost:3000/verify/return.`);
    }
    if (returnUrl.includes('?') || returnUrl.includes('#')) {
      throw new Error(
        `${where}.returnUrl must not contain a query or fragment: the service appends session_id and state itself.`,
      );
    }
    if (!schemeFitsPlatform(returnUrl, platform)) {
      throw new Error(
        platform === 'web'
          ? `${where}.returnUrl must use http or https for a web client (or set "platform": "mobile" for a deep link).`
          : `${where}.returnUrl must be a custom-scheme deep link (e.g. com.example.app://verify/return) for a mobile client.`,
      );
    }
    return { clientId, secret, returnUrl, platform };
  });
}

export interface EnvConfig {
  port: number;
  clients: EmulatorClient[];
  control: boolean;
  /** EMULATOR_PAGE_HOST, when set. */
  pageHost: string | undefined;
  /** EMULATOR_STATUS_READS_PER_SECOND and EMULATOR_CREATES_PER_SECOND, when either is set. */
  rateLimits: RateLimitSettings | undefined;
}

/** What the `emulator` command and the demo use: a name (so passkeys work) that is another site than localhost. */
export const DEFAULT_PAGE_HOST = 'verify.localhost';

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/** A bare host name or IP address for the hosted page: no scheme, port or path. */
export function validatePageHost(value: string, name = 'EMULATOR_PAGE_HOST'): string {
  const bare = value.replace(/^\[(.*)\]$/, '$1');
  if (HOST_NAME.test(bare) || isIP(bare) !== 0) return bare;
  throw new Error(
    `${name} must be a bare host name such as verify.localhost (no scheme, port or path), got "${value}".`,
  );
}

/** Reads EMULATOR_PORT, EMULATOR_CLIENTS, EMULATOR_CONTROL and the rate limits; throws with a clear message on bad values. */
export function loadEnvConfig(env: NodeJS.ProcessEnv = process.env): EnvConfig {
  const pageHost = env.EMULATOR_PAGE_HOST?.trim() ? validatePageHost(env.EMULATOR_PAGE_HOST.trim()) : undefined;
  return {
    port: parsePort(env.EMULATOR_PORT),
    clients: parseClients(env.EMULATOR_CLIENTS),
    control: parseControl(env.EMULATOR_CONTROL),
    pageHost,
    rateLimits: parseRateLimits(env),
  };
}

const RATE_LIMIT_VARIABLES = {
  statusReadsPerSecond: 'EMULATOR_STATUS_READS_PER_SECOND',
  createsPerSecond: 'EMULATOR_CREATES_PER_SECOND',
} as const;

/** Per-client limits from the environment; undefined (no limit) when neither variable is set. */
export function parseRateLimits(env: NodeJS.ProcessEnv): RateLimitSettings | undefined {
  const limits = { ...NO_RATE_LIMITS };
  let given = false;
  for (const [field, variable] of Object.entries(RATE_LIMIT_VARIABLES)) {
    const raw = env[variable]?.trim();
    if (raw === undefined || raw === '') continue;
    const parsed = parseRateLimitUpdate({ [field]: raw === '' ? NaN : Number(raw) });
    if (typeof parsed === 'string') {
      throw new Error(`${variable} must be a number of requests per second per client (0 = no limit), got "${raw}".`);
    }
    Object.assign(limits, parsed);
    given = true;
  }
  return given ? limits : undefined;
}

/** Rate limits passed to startEmulator: each a number per second from 0 (no limit). */
export function validateRateLimits(value: unknown): RateLimitSettings {
  const parsed = parseRateLimitUpdate(value);
  if (typeof parsed === 'string') throw new Error(`rateLimits: ${parsed}`);
  return { ...NO_RATE_LIMITS, ...parsed };
}

export function parsePort(raw: string | undefined, name = 'EMULATOR_PORT'): number {
  if (raw === undefined || raw.trim() === '') return DEFAULT_PORT;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`${name} must be an integer from 0 to 65535, got "${raw}".`);
  }
  return port;
}

/** JSON's strings and its other scalars, matched where a value starts. */
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const SCALAR = /true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** Where `text` stops being JSON: the index of the first character that cannot continue it (its length when it ends early). */
export function jsonErrorPosition(text: string): number {
  let i = 0;
  const fail = (): never => {
    throw new RangeError(String(i));
  };
  const space = () => {
    while (i < text.length && ' \t\n\r'.includes(text.charAt(i))) i++;
  };
  const token = (pattern: RegExp) => {
    pattern.lastIndex = i;
    const match = pattern.exec(text);
    i += match === null ? fail() : match[0].length;
  };
  const list = (close: string, item: () => void) => {
    i++;
    space();
    if (text[i] === close) return void i++;
    for (;;) {
      item();
      space();
      if (text[i] === ',') i++;
      else if (text[i] === close) return void i++;
      else fail();
    }
  };
  const value = (): void => {
    space();
    const c = text[i];
    if (c === '{') {
      list('}', () => {
        space();
        token(STRING);
        space();
        if (text[i] !== ':') fail();
        i++;
        value();
      });
    } else if (c === '[') list(']', value);
    else if (c === '"') token(STRING);
    else token(SCALAR);
  };
  try {
    value();
    space();
    if (i < text.length) fail();
  } catch (error) {
    if (error instanceof RangeError) return Number(error.message);
    throw error;
  }
  return i;
}

export function parseClients(raw: string | undefined): EmulatorClient[] {
  if (raw === undefined || raw.trim() === '') return [DEFAULT_CLIENT];
  return parseClientsJson(raw, 'EMULATOR_CLIENTS');
}

/** Clients given as JSON text (EMULATOR_CLIENTS, a --clients file); `source` names it in the message. */
export function parseClientsJson(given: string, source: string): EmulatorClient[] {
  // A byte order mark, as some editors save a file: JSON readers may ignore it (RFC 8259).
  const raw = given.replace(/^\uFEFF/, '');
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    // Not JSON.parse's message: it quotes the text around the mistake, which holds the secrets.
    throw new Error(
      `${source} is not valid JSON: the mistake is at character ${jsonErrorPosition(raw)} (counting from 0, a string's mistake at its opening quote; the text is not shown, it holds client secrets). Expected e.g. [{"clientId":"demo-client","secret":"…","returnUrl":"http://localhost:3000/verify/return"}].`,
    );
  }
  return validateClients(parsed, source);
}

export function parseControl(raw: string | undefined, name = 'EMULATOR_CONTROL'): boolean {
  if (raw === undefined || raw === '' || raw === 'on') return true;
  if (raw === 'off') return false;
  throw new Error(
    `${name} must be "on" (default) or "off" (production-like: no /_control, no /_dev/inbox), got "${raw}".`,
  );
}
