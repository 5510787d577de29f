/**
 * The start route refuses everything but a same-site POST with the session's CSRF token from a
 * signed-in user naming a registered action; a refusal creates no session and sends no SMS.
 * Also the start-again page a used auto-submit form goes to, and the beforeCreate hook.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KitError, KitErrorCode } from '../../middleware/index.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import type { Answer } from '../support/agent.ts';
import { leaks, newSeen } from '../support/seen.ts';

let app: TestApp;
const seen = newSeen();
let refuseNext = false;
const hookCalls: Array<{ userRef: string; destination: string; action: string }> = [];

beforeAll(async () => {
  app = await startTestApp({
    kit: {
      beforeCreate: (_req, who) => {
        hookCalls.push(who);
        if (refuseNext) {
          refuseNext = false;
          throw new KitError(KitErrorCode.RateLimited, 'Too many verification attempts; try again in 42 s.', {
            retryAfterSeconds: 42,
          });
        }
      },
    },
  });
});
afterAll(async () => {
  await app?.close();
});

async function expectNothingCreated(run: () => Promise<Answer>, status: number, text?: RegExp) {
  const before = { attempts: await app.attemptCount(), creates: (await app.emulator.control.stats()).creates };
  const response = await run();
  expect(response.status).toBe(status);
  const body = await response.text();
  if (text) expect(body).toMatch(text);
  expect(await app.attemptCount()).toBe(before.attempts);
  expect((await app.emulator.control.stats()).creates).toBe(before.creates);
  return { response, body };
}

describe('start refuses', () => {
  it('GET (and other methods than POST) with 405 and Allow: POST', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const { response } = await expectNothingCreated(
      () => alice.request(`/verify/start?action=grant_badge&_csrf=${alice.csrf}`),
      405,
    );
    expect(response.headers.get('allow')).toBe('POST');
    await expectNothingCreated(() => alice.request('/verify/start', { method: 'PUT' }), 405);
  });

  it('a POST without a CSRF token', async () => {
    const alice = await app.agent(seen).signIn('alice');
    await expectNothingCreated(
      () => alice.postStart({ action: 'grant_badge' }),
      403,
      /form has expired or was not sent from this site/,
    );
  });

  it('a POST with a wrong CSRF token (same length, one character off)', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const wrong = alice.csrf.slice(0, -1) + (alice.csrf.endsWith('A') ? 'B' : 'A');
    await expectNothingCreated(() => alice.postStart({ _csrf: wrong, action: 'grant_badge' }), 403);
  });

  it('another session’s CSRF token', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const bob = await app.agent(seen).signIn('bob');
    await expectNothingCreated(() => alice.postStart({ _csrf: bob.csrf, action: 'grant_badge' }), 403);
  });

  it('the token given twice (body field and header disagreeing is ambiguous)', async () => {
    const alice = await app.agent(seen).signIn('alice');
    await expectNothingCreated(
      () => alice.postStart({ _csrf: alice.csrf, action: 'grant_badge' }, { 'x-csrf-token': 'x' }),
      403,
    );
  });

  it('Sec-Fetch-Site: cross-site even with a valid token', async () => {
    const alice = await app.agent(seen).signIn('alice');
    await expectNothingCreated(
      () => alice.postStart({ _csrf: alice.csrf, action: 'grant_badge' }, { 'sec-fetch-site': 'cross-site' }),
      403,
      /form has expired or was not sent from this site/,
    );
    // Users see the text for csrf_failed; the log says which check refused.
    expect(app.logs.at(-1)).toMatch(/came from another site/);
  });

  it('a cross-origin Origin even with a valid token', async () => {
    const alice = await app.agent(seen).signIn('alice');
    await expectNothingCreated(
      () => alice.postStart({ _csrf: alice.csrf, action: 'grant_badge' }, { origin: 'http://127.0.0.1:1' }),
      403,
      /form has expired or was not sent from this site/,
    );
    expect(app.logs.at(-1)).toMatch(/came from another origin/);
    // The log names both origins: the one the request came from and the returnUrl's.
    expect(app.logs.at(-1)).toContain('http://127.0.0.1:1');
    expect(app.logs.at(-1)).toContain(new URL(app.url).origin);
    await expectNothingCreated(
      () =>
        alice.postStart(
          { _csrf: alice.csrf, action: 'grant_badge' },
          { origin: 'null', 'sec-fetch-site': 'cross-site' },
        ),
      403,
    );
  });

  it('Origin: null (what browsers send under helmet’s no-referrer) is decided by the token, not trusted', async () => {
    const alice = await app.agent(seen).signIn('alice');
    await expectNothingCreated(
      () => alice.postStart({ _csrf: 'wrong', action: 'grant_badge' }, { origin: 'null' }),
      403,
    );
    const ok = await alice.postStart({ _csrf: alice.csrf, action: 'grant_badge' }, { origin: 'null' });
    expect(ok.status).toBe(200);
  });

  it('a user who is not signed in (401), even with a session CSRF token', async () => {
    const alice = await app.agent(seen).signIn('alice');
    await alice.request('/test/logout', { method: 'POST' });
    await expectNothingCreated(() => alice.postStart({ _csrf: alice.csrf, action: 'grant_badge' }), 401, /Sign in/);
  });

  it('an unknown, missing or duplicated action (400 unknown_action)', async () => {
    const alice = await app.agent(seen).signIn('alice');
    await expectNothingCreated(
      () => alice.postStart({ _csrf: alice.csrf, action: 'delete_everything' }),
      400,
      /no known action/,
    );
    await expectNothingCreated(() => alice.postStart({ _csrf: alice.csrf }), 400);
    await expectNothingCreated(
      () =>
        alice.request('/verify/start', {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', origin: app.url },
          body: `_csrf=${alice.csrf}&action=grant_badge&action=grant_badge`,
        }),
      400,
    );
  });

  it('parameters the action’s prepare rejects (400), before any session exists', async () => {
    const alice = await app.agent(seen).signIn('alice');
    await expectNothingCreated(
      () => alice.postStart({ _csrf: alice.csrf, action: 'set_note', note: '<script>' }),
      400,
      /Enter a note/,
    );
  });

  it('a start the beforeCreate hook (rate limits) refuses: 429 with Retry-After, no session, no SMS', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const sms = (await app.emulator.control.stats()).smsSent;
    refuseNext = true;
    const { response } = await expectNothingCreated(
      () => alice.postStart({ _csrf: alice.csrf, action: 'grant_badge' }),
      429,
      /Too many/,
    );
    expect(response.headers.get('retry-after')).toBe('42');
    expect((await app.emulator.control.stats()).smsSent).toBe(sms);
    expect(hookCalls.at(-1)).toEqual({ userRef: 'user-alice', destination: '+15550001111', action: 'grant_badge' });
  });
});

describe('start accepts', () => {
  it('a same-origin POST without fetch metadata (older browsers) creates one session with the server’s own user data', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const sms = (await app.emulator.control.stats()).smsSent;
    const response = await alice.request('/verify/start', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      // the browser cannot choose the destination, the user or the success URL
      body: new URLSearchParams({
        _csrf: alice.csrf,
        action: 'grant_badge',
        destination: '+19990000000',
        userRef: 'user-bob',
        successPath: 'https://evil.example/',
      }).toString(),
    });
    expect(response.status).toBe(200);
    const attempt = await app.latestAttempt();
    expect(attempt.userRef).toBe('user-alice');
    expect((await app.emulator.control.stats()).smsSent).toBe(sms + 1);
    const outbox = await app.emulator.control.outbox();
    expect(outbox.at(-1)).toMatchObject({ to: '+15550001111', sessionId: attempt.sessionId });
    expect((await app.store.findAttemptByState(attempt.state))?.returnTo).toBe('/done/badge');
  });
});

describe('start-again page', () => {
  it('offers a fresh POST form (CSRF token, same action) and never carries a handoff', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const handoff = await alice.start('grant_badge');
    const page = await alice.request('/verify/start-again?action=grant_badge');
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(html).toContain('already used');
    expect(html).toContain('<form method="post" action="/verify/start">');
    expect(html).toContain(`name="_csrf" value="${alice.csrf}"`);
    expect(html).not.toContain(handoff.handoff);
    expect(html).not.toContain('name="hx"');
    expect(handoff.html).toContain('"/verify/start-again?action=grant_badge"');
  });

  it('answers 400 without a form for a missing, unknown or duplicated action, and offers no form to a signed-out visitor', async () => {
    const alice = await app.agent(seen).signIn('alice');
    for (const query of ['', '?action=nope', '?action=grant_badge&action=grant_badge']) {
      const answer = await alice.request(`/verify/start-again${query}`);
      expect(answer.status, query).toBe(400);
      expect(await answer.text()).not.toContain('<form');
    }
    const stranger = app.agent(seen);
    expect(await (await stranger.request('/verify/start-again?action=grant_badge')).text()).not.toContain('<form');
  });
});

describe('leaks', () => {
  it('the secret and the handoffs appear in no URL, log line or error of this suite', () => {
    expect(leaks(app, seen)).toEqual([]);
  });
});
