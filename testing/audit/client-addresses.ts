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
  const unreached = unreachedAddress(hostname);
  if (unreached !== undefined) {
    return {
      block: undefined,
      note: 'every browser of the audit connects from one address',
      stop: `your app is given at ${hostname}, ${unreached}: every browser of the audit would connect from one address and spend one per-IP start budget, and the kit serves plain http only at a loopback name (its landing would be at another origin): give \`appUrl\` as http://localhost:<port>, the origin of your kit's \`returnUrl\`. Nothing was started`,
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

/**
 * Why a hostname is no address a browser reaches an app at, if so: the any-address a server
 * listens on (0.0.0.0, [::]), or an IPv4-mapped IPv6 one of it or of loopback ([::ffff:127.0.0.1],
 * which the URL parser writes [::ffff:7f00:1]).
 */
function unreachedAddress(hostname: string): string | undefined {
  if (hostname === '0.0.0.0' || hostname === '[::]') return 'the address your server listens on';
  const mapped = /^\[::ffff:([\da-f]{1,4}):([\da-f]{1,4})\]$/.exec(hostname);
  if (mapped === null) return undefined;
  const high = parseInt(mapped[1] ?? '', 16);
  const low = parseInt(mapped[2] ?? '', 16);
  const anyAddress = high === 0 && low === 0;
  return anyAddress || high >> 8 === 127 ? 'an IPv4-mapped IPv6 address' : undefined;
}
