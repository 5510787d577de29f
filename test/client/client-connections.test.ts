/**
 * The client's `connections` limit, against a loopback server that counts the connections it is
 * given: calls beyond the limit wait for a free connection instead of opening another.
 */
import http from 'node:http';
import { afterEach, expect, it } from 'vitest';
import { createVerifyClient } from '../../middleware/client/client.ts';
import { KitErrorCode } from '../../middleware/errors.ts';
import { closeServer, listen } from '../support/listen.ts';

const servers: http.Server[] = [];

/** Answers every status read verified after `delayMs`, so the calls overlap; counts connections. */
async function countingService(delayMs: number) {
  const seen = { connections: 0, reads: 0 };
  const server = http.createServer((_req, res) => {
    seen.reads++;
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'verified', state: 's', userRef: 'u' }));
    }, delayMs);
  });
  server.on('connection', () => void seen.connections++);
  const port = await listen(server);
  servers.push(server);
  return { url: `http://127.0.0.1:${port}`, seen };
}

const clientOf = (url: string, connections?: number) =>
  createVerifyClient({
    baseUrl: url,
    clientId: 'client-1',
    clientSecret: 'sk_test_connections',
    ...(connections === undefined ? {} : { connections }),
  });

afterEach(async () => {
  await Promise.all(servers.splice(0).map(closeServer));
});

it('opens no more than `connections` connections however many status reads are in flight', async () => {
  const service = await countingService(20);
  const client = clientOf(service.url, 2);
  try {
    const reads = await Promise.all(Array.from({ length: 8 }, (_, i) => client.getSession(`sess-${i}`)));
    expect(reads.every((r) => r.status === 'verified')).toBe(true);
    expect(service.seen).toEqual({ connections: 2, reads: 8 });
  } finally {
    await client.close();
  }
});

it('opens a connection per read in flight when no limit is set', async () => {
  const service = await countingService(20);
  const client = clientOf(service.url);
  try {
    await Promise.all(Array.from({ length: 8 }, (_, i) => client.getSession(`sess-${i}`)));
    expect(service.seen).toEqual({ connections: 8, reads: 8 });
  } finally {
    await client.close();
  }
});

it.each([0, -1, 1.5, '4'])('refuses connections: %j with a message that says what to pass', (connections) => {
  expect(() =>
    createVerifyClient({
      baseUrl: 'http://127.0.0.1:9',
      clientId: 'client-1',
      clientSecret: 'sk_test_connections',
      connections: connections as number,
    }),
  ).toThrow(
    expect.objectContaining({ code: KitErrorCode.InvalidOptions, message: expect.stringContaining('at least 1') }),
  );
});
