/**
 * The audit's own errors about an answer (too slow, never finished, too long) name the host and
 * path asked for, never the query: the audit's requests carry a test attempt's `state`,
 * `session_id` and whatever else a landing's URL holds, and these errors go into its report. A
 * URL's password is not quoted either.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditAgent } from '../../testing/audit/agent.ts';

const STATE = 'st4te-of-the-test-attempt';
const SESSION = 'sess-of-the-test-attempt';
const PASSWORD = 'pr0xy-password';

let server: Server;
let origin: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url?.startsWith('/silent')) return; // never answers
    if (req.url?.startsWith('/trickle')) {
      // Headers, then a byte now and then: never finished, never silent for long.
      res.writeHead(200, { 'content-type': 'text/html' });
      const drip = setInterval(() => res.write('.'), 20);
      res.on('close', () => clearInterval(drip));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('x'.repeat(5 * 1024 * 1024));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("the audit agent's errors", () => {
  // The answer past 4 MB gets all the time a loaded machine needs to send it: that case is about its size.
  it.each([
    ['an app that never answers', '/silent', 300, /answer\w* within 300 ms/],
    ['an answer that never finishes', '/trickle', 300, /did not finish answering within 300 ms/],
    ['an answer past the most the audit reads', '/long', 30_000, /answered more than 4 MB/],
  ])('%s: the error names the path, and quotes neither the query nor a password', async (_, path, timeoutMs, why) => {
    const withCredentials = origin.replace('http://', `http://audit:${PASSWORD}@`);
    const agent = new AuditAgent(withCredentials, () => {}, timeoutMs);
    const error = await agent.request(`${path}?state=${STATE}&session_id=${SESSION}`).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error?.message.split(' ').slice(0, 2)).toEqual(['GET', `${origin}${path}`]);
    expect(error?.message).toMatch(why);
    expect(error?.message).not.toContain(STATE);
    expect(error?.message).not.toContain(SESSION);
    expect(error?.message).not.toContain(PASSWORD);
  });
});
