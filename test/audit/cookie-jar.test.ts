/**
 * The audit's user keeps cookies as a browser does: a Set-Cookie deleting its cookie (Max-Age 0 or
 * less, or an Expires already past, Max-Age winning over Expires) drops it from the jar, so a
 * sign-out or a session change is seen as the browser sees it, and the old cookie is never sent
 * again; a cookie whose Max-Age keeps it is kept even beside an Expires past.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditAgent } from '../../testing/audit/agent.ts';

const PAST = 'Expires=Wed, 21 Oct 2015 07:28:00 GMT';
const FUTURE = 'Expires=Fri, 01 Jan 2100 00:00:00 GMT';

let server: Server;
let origin: string;
beforeAll(async () => {
  // /set?line=... answers with that Set-Cookie line; /echo answers with the Cookie header it got.
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://app');
    if (url.pathname === '/set') res.setHeader('set-cookie', url.searchParams.getAll('line'));
    res.end(req.headers.cookie ?? '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function cookiesSentAfter(line: string): Promise<string> {
  const agent = new AuditAgent(origin, () => {});
  await agent.request(`/set?line=${encodeURIComponent('sid=old; Path=/; HttpOnly')}&line=other=1`);
  expect((await agent.request('/echo')).body).toBe('sid=old; other=1');
  await agent.request(`/set?line=${encodeURIComponent(line)}`);
  return (await agent.request('/echo')).body;
}

describe("the audit's cookie jar", () => {
  it.each([
    ['Max-Age=0', 'sid=old; Path=/; Max-Age=0'],
    ['a negative Max-Age', 'sid=gone; Path=/; Max-Age=-1'],
    ['an Expires past', `sid=gone; Path=/; ${PAST}`],
    ['Max-Age=0 beside an Expires to come (Max-Age wins)', `sid=gone; Path=/; ${FUTURE}; Max-Age=0`],
  ])('a Set-Cookie with %s drops the cookie: it is never sent again', async (_, line) => {
    expect(await cookiesSentAfter(line)).toBe('other=1');
  });

  it.each([
    ['a positive Max-Age beside an Expires past (Max-Age wins)', `sid=new; Path=/; ${PAST}; Max-Age=60`],
    ['an Expires to come', `sid=new; Path=/; ${FUTURE}`],
  ])('a Set-Cookie with %s keeps the new value', async (_, line) => {
    expect(await cookiesSentAfter(line)).toBe('sid=new; other=1');
  });
});
