/**
 * The demo's configuration, read from the environment (every variable is in .env.example) and
 * validated up front with messages that say what to set. Nothing here is ever printed whole: the
 * client secret and the session secret stay out of logs.
 */
import { withoutPassword } from './data.ts';
import { SEEDED_USERS } from './db.ts';
import { DEFAULT_OPERATORS } from './operators.ts';

export interface DemoConfig {
  /** The hosted service's base address; undefined = run against the bundled emulator. */
  verifyBaseUrl: string | undefined;
  clientId: string;
  /** Basic auth password: sent only in the Authorization header by the kit's client. */
  clientSecret: string;
  /** The ONE registered return URL, byte for byte. Its path is where the kit's landing is mounted. */
  returnUrl: string;
  /** Port the demo listens on (0 = any free port, for tests). */
  port: number;
  /** Interface the demo listens on: loopback by default. */
  host: string;
  /** SQLite file shared by the demo's tables, its sessions and the kit's attempts. */
  databasePath: string;
  /** PostgreSQL instead (DATABASE_URL), for several instances; undefined = the SQLite file. */
  databaseUrl: string | undefined;
  /** Signs the `demo.sid` cookie. */
  sessionSecret: string;
  /** Express `trust proxy` setting: set it when a TLS-terminating proxy sits in front (see docs/demo.md). */
  trustProxy: boolean | number | string;
  /** Pause between sweep runs of the in-process worker. */
  sweepIntervalMs: number;
  /** The demo users who may use the operator page (DEMO_OPERATORS, comma-separated ids). */
  operators: readonly string[];
  /** Run the in-process sweep worker (SWEEP_WORKER=off: another instance or the sweep job sweeps). */
  sweepWorker: boolean;
  /** Port of the bundled emulator (only when verifyBaseUrl is undefined). */
  emulatorPort: number;
  /**
   * Host name of the bundled emulator's hosted page: a *.localhost name is another site than the demo's
   * localhost and, unlike 127.0.0.1, a valid WebAuthn RP ID, so its passkey enrolment works.
   */
  emulatorPageHost: string;
}

export const DEFAULTS = {
  clientId: 'demo-client',
  clientSecret: 'demo-secret-change-me',
  returnUrl: 'http://localhost:3000/verify/return',
  port: 3000,
  host: 'localhost',
  databasePath: './data/demo.sqlite',
  sessionSecret: 'change-me-to-a-long-random-value',
  sweepIntervalMs: 30_000,
  emulatorPort: 4010,
  emulatorPageHost: 'verify.localhost',
} as const;

/** The landing's path in the default return URL, on whichever port the demo runs. */
const DEFAULT_RETURN_PATH = '/verify/return';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** As long as the shortest client secret the kit takes. */
const SECRET_LENGTH = 10;
/** The fewest digits a phone number has with its country code. */
const NUMBER_DIGITS = 7;

/**
 * A refused value as a message quotes it back. One as long as a secret (a secret may hold a dot,
 * as a host name does), or with a phone number's digits, may be the client secret or a number
 * pasted into the wrong variable: the message, printed on the terminal and kept in logs, does not
 * repeat it.
 */
function quoted(raw: string): string {
  const digits = raw.replace(/\D/g, '').length;
  if (raw.length >= SECRET_LENGTH || digits >= NUMBER_DIGITS) {
    return 'a value not repeated here, as it may be a secret or a phone number';
  }
  return `"${raw}"`;
}

function text(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}; got ${quoted(raw)}.`);
  }
  return Number(raw);
}

function httpUrl(name: string, value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    // Never quoted: a URL that does not parse may hold the client secret (userinfo with a `/`).
    throw new ConfigError(
      `${name} must be an absolute http(s) URL, e.g. https://verify.example.com (the value is not shown: it may hold a secret).`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`${name} must use http or https; got ${quoted(url.protocol)}.`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new ConfigError(`${name} must not carry credentials; put them in VERIFY_CLIENT_ID and VERIFY_CLIENT_SECRET.`);
  }
  return url;
}

function onOff(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = text(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (raw === 'on' || raw === 'true' || raw === '1') return true;
  if (raw === 'off' || raw === 'false' || raw === '0') return false;
  throw new ConfigError(`${name} must be "on" or "off"; got ${quoted(raw)}.`);
}

function parseTrustProxy(raw: string | undefined): boolean | number | string {
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  return raw; // e.g. "loopback" or a comma-separated list of addresses, as Express accepts
}

/** Reads and validates the demo's configuration. Throws ConfigError naming the variable to fix. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): DemoConfig {
  const verifyBaseUrl = readVerifyBaseUrl(env);
  const clientId = readClientId(env);
  const clientSecret = text(env, 'VERIFY_CLIENT_SECRET') ?? DEFAULTS.clientSecret;
  const port = integer(env, 'PORT', DEFAULTS.port, 0, 65_535);
  const returnUrl = readReturnUrl(env, verifyBaseUrl, port);
  const host = text(env, 'DEMO_HOST') ?? DEFAULTS.host;
  const databasePath = text(env, 'DATABASE_PATH') ?? DEFAULTS.databasePath;
  const databaseUrl = readDatabaseUrl(env);
  const sessionSecret = readSessionSecret(env, verifyBaseUrl);
  const sweepIntervalMs = integer(env, 'SWEEP_INTERVAL_MS', DEFAULTS.sweepIntervalMs, 1000, 86_400_000);
  const emulatorPort = integer(env, 'EMULATOR_PORT', DEFAULTS.emulatorPort, 0, 65_535);
  const emulatorPageHost = readEmulatorPageHost(env);
  return {
    verifyBaseUrl,
    clientId,
    clientSecret,
    returnUrl,
    port,
    host,
    databasePath,
    databaseUrl,
    sessionSecret,
    trustProxy: parseTrustProxy(text(env, 'TRUST_PROXY')),
    operators: readOperators(env),
    sweepIntervalMs,
    sweepWorker: onOff(env, 'SWEEP_WORKER', true),
    emulatorPort,
    emulatorPageHost,
  };
}

function readVerifyBaseUrl(env: NodeJS.ProcessEnv): string | undefined {
  const verifyBaseUrl = text(env, 'VERIFY_BASE_URL');
  if (verifyBaseUrl !== undefined) {
    const url = httpUrl('VERIFY_BASE_URL', verifyBaseUrl);
    if (url.search !== '' || url.hash !== '') {
      throw new ConfigError('VERIFY_BASE_URL must not contain a query string or fragment.');
    }
  }
  return verifyBaseUrl;
}

function readClientId(env: NodeJS.ProcessEnv): string {
  const clientId = text(env, 'VERIFY_CLIENT_ID') ?? DEFAULTS.clientId;
  if (clientId.includes(':')) {
    throw new ConfigError('VERIFY_CLIENT_ID must not contain ":" (it is the Basic auth user name).');
  }
  return clientId;
}

function readReturnUrl(env: NodeJS.ProcessEnv, verifyBaseUrl: string | undefined, port: number): string {
  // Not trimmed beyond surrounding whitespace: the service compares it byte for byte. With the
  // bundled emulator the demo registers it itself, so an unset one follows PORT.
  const returnUrl =
    text(env, 'VERIFY_RETURN_URL') ??
    (verifyBaseUrl === undefined ? `http://localhost:${port}${DEFAULT_RETURN_PATH}` : DEFAULTS.returnUrl);
  const parsedReturn = httpUrl('VERIFY_RETURN_URL', returnUrl);
  if (returnUrl.includes('?') || returnUrl.includes('#')) {
    throw new ConfigError(
      'VERIFY_RETURN_URL must not contain a query string or fragment: the service appends session_id and state itself.',
    );
  }
  if (parsedReturn.pathname === '/') {
    throw new ConfigError('VERIFY_RETURN_URL needs a path of its own, e.g. http://localhost:3000/verify/return.');
  }
  return returnUrl;
}

function readDatabaseUrl(env: NodeJS.ProcessEnv): string | undefined {
  const databaseUrl = text(env, 'DATABASE_URL');
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError(
      'DATABASE_URL must be a PostgreSQL connection string, e.g. postgres://app@db.internal:5432/app.',
    );
  }
  return databaseUrl;
}

/** Long enough everywhere; in production, neither the .env.example value nor the bundled emulator. */
function readSessionSecret(env: NodeJS.ProcessEnv, verifyBaseUrl: string | undefined): string {
  const sessionSecret = text(env, 'SESSION_SECRET') ?? DEFAULTS.sessionSecret;
  if (sessionSecret.length < 16) {
    throw new ConfigError(
      'SESSION_SECRET must be at least 16 characters; use a long random value, e.g. `openssl rand -hex 32`.',
    );
  }
  if (env.NODE_ENV === 'production') {
    if (sessionSecret === DEFAULTS.sessionSecret) {
      throw new ConfigError('SESSION_SECRET still has the .env.example value; set a long random value in production.');
    }
    if (verifyBaseUrl === undefined) {
      throw new ConfigError(
        'VERIFY_BASE_URL is empty, which runs the local emulator; set the real service address in production.',
      );
    }
  }
  return sessionSecret;
}

/** Seeded users' ids, comma-separated: the operator page is theirs alone. */
function readOperators(env: NodeJS.ProcessEnv): readonly string[] {
  const raw = text(env, 'DEMO_OPERATORS');
  if (raw === undefined) return DEFAULT_OPERATORS;
  const ids = raw.split(',').map((id) => id.trim());
  const seeded = SEEDED_USERS.map((user) => user.id);
  const unknown = ids.find((id) => !seeded.includes(id));
  if (unknown !== undefined) {
    throw new ConfigError(
      `DEMO_OPERATORS must list demo user ids separated by commas (${seeded.join(', ')}); got ${quoted(unknown)}.`,
    );
  }
  return ids;
}

function readEmulatorPageHost(env: NodeJS.ProcessEnv): string {
  const emulatorPageHost = text(env, 'EMULATOR_PAGE_HOST') ?? DEFAULTS.emulatorPageHost;
  if (!/^[a-z0-9.-]+$/i.test(emulatorPageHost)) {
    throw new ConfigError(
      `EMULATOR_PAGE_HOST must be a bare host name such as verify.localhost (no scheme, port or path); got ${quoted(emulatorPageHost)}.`,
    );
  }
  return emulatorPageHost;
}

/**
 * With the bundled emulator, the browser really lands on VERIFY_RETURN_URL, so it must point at
 * this demo on loopback. Throws a ConfigError with the value to use when it does not.
 */
export function checkReturnUrlServesDemo(config: DemoConfig, actualPort: number): void {
  const url = new URL(config.returnUrl);
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  if (!LOOPBACK_HOSTS.has(url.hostname) || port !== actualPort || url.protocol !== 'http:') {
    throw new ConfigError(
      `VERIFY_RETURN_URL (${config.returnUrl}) does not reach this demo on port ${actualPort}. With the bundled emulator set ` +
        `VERIFY_RETURN_URL=http://localhost:${actualPort}${url.pathname}, or set PORT=${port}.`,
    );
  }
}

/** A loggable summary: no secrets. */
export function describeConfig(config: DemoConfig): Record<string, unknown> {
  return {
    verifyBaseUrl: config.verifyBaseUrl ?? '(bundled emulator)',
    clientId: config.clientId,
    returnUrl: config.returnUrl,
    port: config.port,
    host: config.host,
    database: config.databaseUrl === undefined ? config.databasePath : withoutPassword(config.databaseUrl),
    trustProxy: config.trustProxy,
    operators: config.operators,
    sweepIntervalMs: config.sweepIntervalMs,
    sweepWorker: config.sweepWorker,
  };
}
