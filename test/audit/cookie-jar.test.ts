/**
 * The audit's user keeps cookies as a browser does: a Set-Cookie deleting its cookie (Max-Age 0 or
 * less, or an Expires already past, Max-Age winning over Expires) drops it from the jar, so a
 * sign-out or a session change is seen as the browser sees it, and the old cookie is never sent
 * again; a cookie whose Max-Age keeps it is kept even beside an Expires past. A cookie is known by
 * its name, domain and path (RFC 6265 §5.3): it goes only to the paths its path covers, longer paths
 * first, and to its own host unless a Domain of that site widens it to the names under it; a Domain
 * of another site, or a public suffix, has the line ignored; an empty value is a cookie sent as `name=`.
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
  // /set...?line=... answers with that Set-Cookie line; any path answers with the Cookie header it got.
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://app');
    if (url.pathname.startsWith('/set')) res.setHeader('set-cookie', url.searchParams.getAll('line'));
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

/** What `agent` sends to each of `paths` (on its own origin, or a whole URL). */
async function sentTo(agent: AuditAgent, paths: string[]): Promise<string[]> {
  const sent: string[] = [];
  for (const path of paths) sent.push((await agent.request(path)).body);
  return sent;
}

function set(lines: string[], from = '/set'): string {
  return `${from}?${lines.map((line) => `line=${encodeURIComponent(line)}`).join('&')}`;
}

describe("the audit's cookie jar keeps each cookie where the app put it", () => {
  it('a cookie with Path=/admin goes to /admin and the paths under it only', async () => {
    const agent = new AuditAgent(origin, () => {});
    await agent.request(set(['admin=1; Path=/admin']));
    expect(await sentTo(agent, ['/', '/echo', '/admin', '/admin/users', '/administrator'])).toEqual([
      '',
      '',
      'admin=1',
      'admin=1',
      '',
    ]);
  });

  it('two cookies of one name on different paths are both kept, the longer path sent first, and deleting one keeps the other', async () => {
    const agent = new AuditAgent(origin, () => {});
    await agent.request(set(['sid=root; Path=/', 'sid=app; Path=/app']));
    expect(await sentTo(agent, ['/app/home', '/echo'])).toEqual(['sid=app; sid=root', 'sid=root']);
    await agent.request(set(['sid=; Path=/app; Max-Age=0']));
    expect(await sentTo(agent, ['/app/home', '/echo'])).toEqual(['sid=root', 'sid=root']);
  });

  it('a cookie without a Path, or with one not starting with /, is scoped to the directory of the page that set it', async () => {
    const agent = new AuditAgent(origin, () => {});
    await agent.request(set(['bare=1', 'relative=1; Path=app'], '/settings/profile/page'));
    expect(await sentTo(agent, ['/echo', '/settings/page', '/settings/profile/other'])).toEqual([
      '',
      '',
      'bare=1; relative=1',
    ]);
  });

  it('a cookie set with an empty value is kept and sent as name=', async () => {
    expect(await cookiesSentAfter('sid=; Path=/')).toBe('sid=; other=1');
  });

  it('a cookie without a Domain goes to its own host only; with Domain of its own site, to the names under it too', async () => {
    const port = new URL(origin).port;
    const agent = new AuditAgent(`http://app.localhost:${port}`, () => {});
    await agent.request(set(['host=1; Path=/', 'site=1; Path=/; Domain=.APP.localhost']));
    const under = `http://sub.app.localhost:${port}/echo`;
    const beside = `http://other.localhost:${port}/echo`;
    expect(await sentTo(agent, ['/echo', under, beside])).toEqual(['host=1; site=1', 'site=1', '']);
  });

  it('a cookie whose Domain is another site, or a public suffix, is ignored', async () => {
    const port = new URL(origin).port;
    const agent = new AuditAgent(`http://app.localhost:${port}`, () => {});
    const lines = ['a=1; Domain=other.localhost', 'b=1; Domain=localhost', 'c=1; Domain=example.com', 'd=1'];
    await agent.request(set(lines.map((line) => `${line}; Path=/`)));
    expect(await sentTo(agent, ['/echo', `http://other.localhost:${port}/echo`])).toEqual(['d=1', '']);
  });
});
