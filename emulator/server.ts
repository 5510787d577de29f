/**
 * The emulator's HTTP server. Loaded by `startEmulator` only when an emulator starts, because it
 * needs `helmet` and `@simplewebauthn/server`, which an app installs as devDependencies: the package
 * does not declare them, so a production install never holds them.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from './app.ts';
import type { TestClock } from './clock.ts';
import type { EmulatorClient } from './config/config.ts';
import { createContext } from './context.ts';
import { relyingPartyOf } from './passkeys/passkeys.ts';
import type { RateLimitSettings } from './config/rate-limit-settings.ts';
import type { SmsPrices } from './config/sms-prices.ts';
import { answerUnparsedRequest } from './api/unparsed-requests.ts';

export interface ServerSettings {
  port: number;
  host: string;
  pageHost: string;
  clients: EmulatorClient[];
  control: boolean;
  log: (line: string) => void;
  clock: TestClock | undefined;
  rateLimits: RateLimitSettings | undefined;
  /** Default DEFAULT_SMS_PRICES. */
  smsPrices?: SmsPrices;
}

export interface ListeningEmulator {
  url: string;
  pageOrigin: string;
  close(): Promise<void>;
}

export async function listenEmulator(settings: ServerSettings): Promise<ListeningEmulator> {
  const shutdown = new AbortController();
  const context = createContext(
    settings.clients,
    settings.log,
    shutdown.signal,
    settings.rateLimits,
    settings.clock,
    settings.smsPrices,
  );
  const server = createServer(createApp(context, { control: settings.control }));
  server.on('clientError', answerUnparsedRequest);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.port, settings.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port: boundPort } = server.address() as AddressInfo;
  const url = `http://${bracketed(settings.host)}:${boundPort}`;
  context.origin = url;
  context.pageOrigin = `http://${bracketed(settings.pageHost)}:${boundPort}`;
  context.relyingParty = relyingPartyOf(context.pageOrigin);

  return {
    url,
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
