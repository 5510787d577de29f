/** The local stand-in of the hosted SMS verification service. See ./README.md. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from './app.ts';
import { loadEnvConfig, validateClients, validatePageHost, validateRateLimits, type EmulatorClient } from './config.ts';
import { createContext } from './context.ts';
import { emulatorControl, type EmulatorControl } from './control-client.ts';
import { relyingPartyOf } from './passkeys.ts';
import type { RateLimitSettings } from './rate-limits.ts';

export type { EmulatorClient, Platform } from './config.ts';
export type { RateLimitSettings } from './rate-limits.ts';
export { DEFAULT_CLIENT } from './config.ts';

export interface EmulatorOptions {
  /** 0 = ephemeral (tests); default from EMULATOR_PORT or 4010. */
  port?: number;
  /** Default '127.0.0.1': a different site from the demo's 'localhost'. */
  host?: string;
  /**
   * Host name browsers use for the hosted page (verifyUrl), on the same port. Default `host` (so Node
   * can fetch verifyUrl in tests; EMULATOR_PAGE_HOST is read by `npm run emulator` only). A name such as
   * 'verify.localhost' enables passkeys (an IP cannot be a WebAuthn RP ID) and stays another site than
   * 'localhost'; browsers resolve *.localhost to loopback themselves.
   */
  pageHost?: string;
  /** Default from EMULATOR_CLIENTS or the one client of .env.example. */
  clients?: EmulatorClient[];
  /** Mount /_control and /_dev/inbox (loopback only). Default true unless EMULATOR_CONTROL=off. */
  control?: boolean;
  /** SMS lines etc.; default console.log. */
  log?: (line: string) => void;
  /**
   * Per-client limits: beyond them a call is answered 429 with `Retry-After` (seconds). Default
   * from EMULATOR_STATUS_READS_PER_SECOND and EMULATOR_CREATES_PER_SECOND, else none (0 = none).
   */
  rateLimits?: Partial<RateLimitSettings>;
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

export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  // Env is read only for what the caller did not pass, so a bad env never breaks explicit options.
  const env = () => loadEnvConfig();
  const port = options.port ?? env().port;
  const clients = options.clients === undefined ? env().clients : validateClients(options.clients);
  const control = options.control ?? env().control;
  const host = options.host ?? '127.0.0.1';
  const pageHost = validatePageHost(options.pageHost ?? host);
  const rateLimits = options.rateLimits === undefined ? env().rateLimits : validateRateLimits(options.rateLimits);
  const shutdown = new AbortController();
  const context = createContext(clients, options.log ?? console.log, shutdown.signal, rateLimits);
  const server = createServer(createApp(context, { control }));

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port: boundPort } = server.address() as AddressInfo;
  const url = `http://${bracketed(host)}:${boundPort}`;
  context.origin = url;
  context.pageOrigin = `http://${bracketed(pageHost)}:${boundPort}`;
  context.relyingParty = relyingPartyOf(context.pageOrigin);

  return {
    url,
    control: emulatorControl(url),
    pageOrigin: context.pageOrigin,
    close: () =>
      new Promise<void>((resolve, reject) => {
        shutdown.abort();
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections(); // keep-alive sockets would otherwise hold close() open
      }),
  };
}

function bracketed(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}
