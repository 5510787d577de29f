/** The local stand-in of the hosted SMS verification service. See ./README.md. */
import type { TestClock } from './clock.ts';
import {
  loadEnvConfig,
  validateClients,
  validatePageHost,
  validateRateLimits,
  type EmulatorClient,
} from './config/config.ts';
import { emulatorControl, type EmulatorControl } from './control/control-client.ts';
import type * as Server from './server.ts';
import type { RateLimitSettings } from './config/rate-limit-settings.ts';
import { validateSmsPrices, type SmsPrices } from './config/sms-prices.ts';

export type { EmulatorClient, Platform } from './config/config.ts';
export type { RateLimitSettings } from './config/rate-limit-settings.ts';
export { DEFAULT_CLIENT } from './config/config.ts';
export { DEFAULT_SMS_PRICES, type SmsPrices } from './config/sms-prices.ts';

export interface EmulatorOptions {
  /** 0 = ephemeral (tests); default from EMULATOR_PORT or 4010. */
  port?: number;
  /** Default '127.0.0.1': a different site from the demo's 'localhost'. */
  host?: string;
  /**
   * Host name browsers use for the hosted page (verifyUrl), on the same port. Default `host` (so Node
   * can fetch verifyUrl in tests; EMULATOR_PAGE_HOST is read by the `emulator` command only). A name such as
   * 'verify.localhost' enables passkeys (an IP cannot be a WebAuthn RP ID) and stays another site than
   * 'localhost'; browsers resolve *.localhost to loopback themselves.
   */
  pageHost?: string;
  /** Default from EMULATOR_CLIENTS, else one client `demo-client` returning to http://localhost:3000/verify/return. */
  clients?: EmulatorClient[];
  /** Mount /_control and /_dev/inbox (loopback only). Default true unless EMULATOR_CONTROL=off. */
  control?: boolean;
  /** Where each text's line goes (its number masked, e.g. `SMS to •• 23: your code is …`); default console.log. */
  log?: (line: string) => void;
  /**
   * Per-client limits: beyond them a call is answered 429 with `Retry-After` (seconds). Default
   * from EMULATOR_STATUS_READS_PER_SECOND and EMULATOR_CREATES_PER_SECOND, else none (0 = none).
   */
  rateLimits?: Partial<RateLimitSettings>;
  /**
   * The emulator's clock. Pass the `createTestClock()` you also give the kit (`now: clock.now`) so
   * that `clock.advance({ seconds })` moves both. Default: its own virtual clock.
   */
  clock?: TestClock;
  /**
   * What a text costs per destination country, summed in `/_control/stats` (`smsCost`,
   * `smsByCountry`): `{ default, countries: { NG: 0.3 } }`, merged over DEFAULT_SMS_PRICES.
   */
  smsPrices?: Partial<SmsPrices>;
}

export interface RunningEmulator {
  /** The API's base URL, e.g. http://127.0.0.1:4010 (no trailing slash). */
  url: string;
  /** Typed calls to its control API (they answer 404 when started with `control: false`). */
  control: EmulatorControl;
  /** The hosted page's origin (what verifyUrl starts with), e.g. http://verify.localhost:4010. */
  pageOrigin: string;
  close(): Promise<void>;
}

/** The emulator's own dependencies: the app's devDependencies (the package does not declare them). */
export const EMULATOR_PEERS = ['helmet', '@simplewebauthn/server'] as const;

/** Loads the server, naming the missing devDependencies instead of a bare ERR_MODULE_NOT_FOUND. */
async function loadServer(): Promise<typeof Server> {
  try {
    return await import('./server.ts');
  } catch (error) {
    const missing = EMULATOR_PEERS.filter((name) => String((error as Error).message).includes(`'${name}'`));
    if ((error as { code?: string }).code !== 'ERR_MODULE_NOT_FOUND' || missing.length === 0) throw error;
    throw new Error(
      `The emulator needs ${missing.join(' and ')}, which your app installs as devDependencies: ` +
        `npm install --save-dev ${EMULATOR_PEERS.join(' ')}`,
      { cause: error },
    );
  }
}

/**
 * The caller's log is its own code: one that throws or rejects must not turn a created session into
 * a 500 or reach the process as an unhandled rejection. Its failure is dropped (there is nowhere
 * else to write it).
 */
function neverThrowing(log: (line: string) => void): (line: string) => void {
  return (line) => {
    try {
      const result: unknown = log(line);
      if (result instanceof Promise) result.catch(() => {});
    } catch {
      // The line is lost; the emulator goes on.
    }
  };
}

export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  // Env is read only for what the caller did not pass, so a bad env never breaks explicit options.
  const env = () => loadEnvConfig();
  const host = options.host ?? '127.0.0.1';
  const settings = {
    port: options.port ?? env().port,
    clients: options.clients === undefined ? env().clients : validateClients(options.clients),
    control: options.control ?? env().control,
    host,
    pageHost: validatePageHost(options.pageHost ?? host, options.pageHost === undefined ? 'host' : 'pageHost'),
    log: neverThrowing(options.log ?? console.log),
    clock: options.clock,
    rateLimits: options.rateLimits === undefined ? env().rateLimits : validateRateLimits(options.rateLimits),
    smsPrices: validateSmsPrices(options.smsPrices ?? {}),
  };
  const { listenEmulator } = await loadServer();
  const running = await listenEmulator(settings);
  return { ...running, control: emulatorControl(running.url) };
}
