/**
 * A page renderer of the app's (pages.error, pages.startAgain) that throws or rejects with a value no
 * one can look at (a revoked Proxy) gets the built-in page, as one throwing an Error does: a bad
 * landing is still a 400, the start-again page is shown, nothing is left unhandled and no stack is
 * shown. The kit's handler threw on the value itself: a 400 became a 500, the page was never shown,
 * a rejection went unhandled.
 */
import { afterEach, expect, it } from 'vitest';
import { englishMessages } from '../../middleware/pages/messages.ts';
import type { VerificationKitOptions } from '../../middleware/options/options.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { newSeen } from '../support/seen.ts';
import { watchUnhandledRejections } from '../support/unhandled.ts';

const seen = newSeen();
const unhandled = watchUnhandledRejections();
const STACK_LINE = /\n\s+at [^\n]+:\d+:\d+/;

function throwingRevokedProxy(): () => never {
  return () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    throw proxy;
  };
}

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
  expect(await unhandled.settled()).toEqual([]);
});

async function appWith(kit: Partial<VerificationKitOptions<unknown>>): Promise<TestApp> {
  app = await startTestApp({ kit });
  return app;
}

it('pages.error throwing a revoked Proxy: a bad landing gets the built-in 400 error page', async () => {
  const a = await appWith({ pages: { error: throwingRevokedProxy() } });
  const answer = await a.agent(seen).land('session_id=x&state=bad');
  expect(answer.status).toBe(400);
  expect(answer.body).toContain(englishMessages.error.heading);
  expect(answer.body).not.toMatch(STACK_LINE);
});

it('pages.startAgain throwing a revoked Proxy: the built-in start-again page is shown', async () => {
  const a = await appWith({ pages: { startAgain: throwingRevokedProxy() } });
  const answer = await a.agent(seen).request('/verify/start-again?action=grant_badge');
  expect(answer.status).toBe(200);
  expect(answer.body).toContain(englishMessages.startAgain.heading);
  expect(answer.body).not.toMatch(STACK_LINE);
});

it('pages.startAgain returning a promise rejected with a revoked Proxy: the page is shown, nothing unhandled', async () => {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  const a = await appWith({ pages: { startAgain: (() => Promise.reject(proxy)) as unknown as () => string } });
  const answer = await a.agent(seen).request('/verify/start-again?action=grant_badge');
  expect(answer.status).toBe(200);
  expect(answer.body).toContain(englishMessages.startAgain.heading);
  // afterEach: expect(await unhandled.settled()).toEqual([]) fails here on the current code.
});
