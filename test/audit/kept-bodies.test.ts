/**
 * What a run keeps of the answers' bodies: an app whose pages are megabytes each must not run the
 * audit out of memory, so the bodies kept for the checks that read them at the end are bounded
 * in all, and what a body past the bound holds of the client secret and of the files its page
 * loads is still known (leak.secret and the file search lose nothing).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Verdict } from '../../testing/audit/check.ts';
import { exposureChecks } from '../../testing/audit/checks-exposure.ts';
import { resolveAuditOptions } from '../../testing/audit/options.ts';
import { AuditWorld } from '../../testing/audit/world.ts';

const SECRET = 'kept-bodies-secret-0123456789';
/** What the audit keeps of all bodies together (32 MB of text). */
const KEPT_AT_MOST = 32 * 1024 * 1024;
const PAGE_CHARS = 4 * 1024 * 1024 - 1024;
const PAGES = 14;

let server: Server;
let appUrl: string;

beforeAll(async () => {
  const filler = 'x'.repeat(PAGE_CHARS);
  server = createServer((req, res) => {
    const leaky = req.url === '/leaky';
    res.writeHead(200, { 'content-type': 'text/html' });
    // The secret, 12 characters of it, in the middle of a page past the bound.
    const middle = leaky ? ` hint ${SECRET.slice(3, 17)} ` : '';
    res.end(
      `<html><script src="/app-${req.url?.slice(1)}.js"></script>${filler.slice(0, PAGE_CHARS / 2)}${middle}${filler.slice(PAGE_CHARS / 2)}</html>`,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  appUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function world(): AuditWorld {
  return new AuditWorld(
    resolveAuditOptions({
      appUrl,
      emulatorUrl: 'http://127.0.0.1:1',
      clientId: 'audit-client',
      clientSecret: SECRET,
      signIn: { path: '/login', fields: (user) => ({ user }) },
      actions: [{ name: 'confirm_phone' }],
      probe: () => 0,
    }),
  );
}

describe('the answers one audit run keeps', () => {
  it(`${PAGES} pages of 4 MB: at most 32 MB of bodies kept, the secret in one past it still found, its files still listed`, async () => {
    const run = world();
    const agent = run.agent();
    for (let n = 0; n < PAGES - 1; n++) await agent.request(`/page${n}`);
    await agent.request('/leaky');
    const kept = (exchanges: readonly { responseBody: string }[]) =>
      exchanges.reduce((sum, x) => sum + x.responseBody.length, 0);
    expect(run.exchanges).toHaveLength(PAGES);
    expect(kept(run.exchanges)).toBeLessThanOrEqual(KEPT_AT_MOST);
    expect(kept(agent.exchanges)).toBeLessThanOrEqual(KEPT_AT_MOST);
    const leaky = run.exchanges.at(-1)!;
    expect(leaky.responseBody).toBe('');
    expect(leaky.unkeptBody?.chars).toBeGreaterThan(PAGE_CHARS);
    expect(leaky.unkeptBody?.secret).toMatch(/^12 characters or more of it, /);
    expect(leaky.unkeptBody?.files).toEqual([`${appUrl}/app-leaky.js`]);
    // A page kept whole is searched at the end as before: nothing of it is digested.
    expect(run.exchanges[0]!.unkeptBody).toBeUndefined();
    expect(run.exchanges[0]!.responseBody.length).toBeGreaterThan(PAGE_CHARS);
  }, 30_000);

  it('leak.secret fails on the secret in a body past the bound; leak.handoff says the bodies it could not search', async () => {
    const run = world();
    const agent = run.agent();
    for (let n = 0; n < PAGES - 1; n++) await agent.request(`/page${n}`);
    await agent.request('/leaky');
    const judged = async (id: string) => {
      const verdict = new Verdict();
      await exposureChecks.find((check) => check.id === id)!.run(run, verdict);
      return verdict;
    };
    const secret = await judged('leak.secret');
    expect(secret.failures).toContain(
      'the client secret (12 characters or more of it, as is) in GET /leaky response body',
    );
    const handoff = await judged('leak.handoff');
    expect(handoff.notes.join('\n')).toMatch(
      /answer bodies \(\d+\.\d MB\) past the 32 MB of bodies a run keeps not searched for a handoff/,
    );
  }, 30_000);
});
