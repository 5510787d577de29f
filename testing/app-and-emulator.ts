/**
 * The order a test must set up an app and its emulator in, as one call: the emulator registers the
 * app's return URL, which holds the app's port, and the app's kit needs the emulator's URL. This
 * makes the app's server listen first (a free port on loopback), then starts an emulator with a
 * client returning to `http://localhost:<port><returnPath>`; the test then builds its kit and
 * attaches its Express app (`server.on('request', app)`).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestClock } from '../emulator/clock.ts';
import { startEmulator, type RunningEmulator } from '../emulator/index.ts';

export interface AppAndEmulatorOptions {
  /** The app's server; default a new `http.Server`. It must not be listening yet. */
  server?: Server;
  /** The return URL's path; default '/verify/return'. */
  returnPath?: string;
  /** Shared with your kit (`now: clock.now`), so `clock.advance` moves both. */
  clock?: TestClock;
  /** The emulator's log; default: silent. */
  log?: (line: string) => void;
}

export interface AppAndEmulator {
  server: Server;
  /** `http://localhost:<port>`: where browsers reach the app (a different site from the emulator's 127.0.0.1). */
  appUrl: string;
  returnUrl: string;
  emulator: RunningEmulator;
  /** Give these to your kit: `createVerificationKit({ ...kitOptions, ... })`. */
  kitOptions: { baseUrl: string; clientId: string; clientSecret: string; returnUrl: string };
  /** Closes the app's server and the emulator. */
  close(): Promise<void>;
}

export async function startAppAndEmulator(options: AppAndEmulatorOptions = {}): Promise<AppAndEmulator> {
  const server = options.server ?? createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const appUrl = `http://localhost:${(server.address() as AddressInfo).port}`;
  const returnUrl = `${appUrl}${options.returnPath ?? '/verify/return'}`;
  const client = { clientId: 'test-app', secret: `test-secret-${randomBytes(12).toString('hex')}`, returnUrl };
  let emulator: RunningEmulator;
  try {
    emulator = await startEmulator({
      port: 0,
      clients: [client],
      log: options.log ?? (() => {}),
      ...(options.clock === undefined ? {} : { clock: options.clock }),
    });
  } catch (error) {
    server.close();
    throw error;
  }
  return {
    server,
    appUrl,
    returnUrl,
    emulator,
    kitOptions: { baseUrl: emulator.url, clientId: client.clientId, clientSecret: client.secret, returnUrl },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await emulator.close();
    },
  };
}
