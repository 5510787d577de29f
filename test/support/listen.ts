/** Listening on a free loopback port and closing again, the one way every suite and the bench do it. */
import type { Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer } from 'node:net';

/** Listens on `port` (0 = any free one) at `host` and resolves with the port; rejects when it cannot listen. */
export function listen(server: NetServer, options: { port?: number; host?: string } = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** Stops accepting, drops open (keep-alive) connections and resolves once the server is closed. */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** A port nothing listens on right now: for a child process told where to listen, or a dead address. */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const server = createNetServer();
  const port = await listen(server, { host });
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
