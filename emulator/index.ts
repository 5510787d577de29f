/** The local stand-in of the hosted SMS verification service. See ./README.md. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from './app.ts';
import { loadEnvConfig, validateClients, type EmulatorClient } from './config.ts';
import { createContext } from './context.ts';
import { emulatorControl, type EmulatorControl } from './control-client.ts';

export type { EmulatorClient, Platform } from './config.ts';
export { DEFAULT_CLIENT } from './config.ts';

export interface EmulatorOptions {
  /** 0 = ephemeral (tests); default from EMULATOR_PORT or 4010. */
  port?: number;
  /** Default '127.0.0.1': a different site from the demo's 'localhost'. */
  host?: string;
  /** Default from EMULATOR_CLIENTS or the one client of .env.example. */
  clients?: EmulatorClient[];
  /** Mount /_control and /_dev/inbox (loopback only). Default true unless EMULATOR_CONTROL=off. */
  control?: boolean;
  /** SMS lines etc.; default console.log. */
  log?: (line: string) => void;
}

export interface RunningEmulator {
  /** e.g. http://127.0.0.1:4010 (no trailing slash). */
  url: string;
  /** Typed calls to its control API (they answer 404 when started with `control: false`). */
  control: EmulatorControl;
  close(): Promise<void>;
}

export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  // Env is read only for what the caller did not pass, so a bad env never breaks explicit options.
  const env = () => loadEnvConfig();
  const port = options.port ?? env().port;
  const clients = options.clients === undefined ? env().clients : validateClients(options.clients);
  const control = options.control ?? env().control;
  const host = options.host ?? '127.0.0.1';
  const shutdown = new AbortController();
  const context = createContext(clients, options.log ?? console.log, shutdown.signal);
  const server = createServer(createApp(context, { control }));

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port: boundPort } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${boundPort}`;
  context.origin = url;

  return {
    url,
    control: emulatorControl(url),
    close: () =>
      new Promise<void>((resolve, reject) => {
        shutdown.abort();
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections(); // keep-alive sockets would otherwise hold close() open
      }),
  };
}
