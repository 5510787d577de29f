/**
 * Where the audit's browsers connect from. Each from its own loopback address (127.x.y.z), so the
 * app's per-IP start budget it spends is its own and never a real user's: whatever the app's
 * `trust proxy`, a direct connection's address is the client's. The system's own address when the
 * app is not on loopback or the system cannot bind 127.0.0.0/8.
 */
import { randomInt } from 'node:crypto';
import { createServer } from 'node:net';
import { connectHost } from './agent.ts';

/**
 * The second octet of the run's loopback client addresses (undefined: the system's own), how
 * evidence says it, and why the run cannot go on, if so.
 */
export interface ClientAddresses {
  block: number | undefined;
  note: string;
  stop?: string;
}

export async function loopbackBlock(appUrl: string): Promise<ClientAddresses> {
  const { hostname } = new URL(appUrl);
  // IPv6 loopback is ::1 alone (the URL parser writes every spelling of it so): every browser would
  // share one address, and one per-IP start budget the run spends halfway (each later check failing on a 429).
  if (hostname === '[::1]') {
    return {
      block: undefined,
      note: 'every browser of the audit connects from ::1',
      stop: `your app is at [::1], where every browser of the audit would connect from ::1 and spend one per-IP start budget (your start limits would refuse the run halfway): listen on 127.0.0.1 too (or on every address) and give \`appUrl\` as http://localhost:<port>. Nothing was started`,
    };
  }
  // Where the agent connects: `localhost` and every `*.localhost` name are loopback as well.
  const host = connectHost(hostname);
  if (!/^127\.\d+\.\d+\.\d+$/.test(host)) {
    return {
      block: undefined,
      note: `the app is not on loopback: every browser of the audit connects from this host's address, whose per-IP start budget it spends`,
    };
  }
  const block = randomInt(1, 255);
  const probe = `127.${block}.0.1`;
  const bound = await new Promise<boolean>((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(0, probe, () => server.close(() => resolve(true)));
  });
  if (!bound) {
    return {
      block: undefined,
      note: `this system cannot connect from ${probe}: every browser of the audit connects from 127.0.0.1, whose per-IP start budget it spends`,
    };
  }
  return {
    block,
    note: `each browser of the audit connects from its own address in 127.${block}.0.0/16, never 127.0.0.1`,
  };
}
