/** Listening on a free loopback port and closing again, for the bench's app processes (the suites keep their own). */
import type { Server } from 'node:http';
import type { AddressInfo, Server as NetServer } from 'node:net';

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
