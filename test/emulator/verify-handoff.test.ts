import { get } from 'node:http';
import { describe, expect, it } from 'vitest';
import { HANDOFF_TTL_SECONDS, SessionStore } from '../../emulator/api/sessions.ts';
import type { TestClock } from '../../emulator/clock.ts';
import {
  WEB_CLIENT,
  newSession,
  openHostedPage,
  postForm,
  readSession,
  submitCode,
  useTestEmulator,
} from '../support/emulator.ts';

const emulator = useTestEmulator({}, { resetEach: true });

const STALE_TEXT = 'This link was already used or has expired';

describe('POST {verifyUrl} with the handoff in form field hx', () => {
  it('opens the hosted code page without Basic auth', async () => {
    const { verifyUrl, handoff } = await newSession(emulator.url, WEB_CLIENT);
    const page = await openHostedPage(verifyUrl, handoff);
    expect(page.response.status).toBe(200);
    expect(page.response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.html).toContain('autocomplete="one-time-code"');
    expect(page.html).toContain('inputmode="numeric"');
  });

  it('keeps flow values out of URLs: the code form posts to a fixed path with a hidden binding, never the handoff', async () => {
    const { verifyUrl, handoff, sessionId } = await newSession(emulator.url, WEB_CLIENT);
    const page = await openHostedPage(verifyUrl, handoff);
    expect(page.html).toContain('action="/verify/code"');
    expect(page.html).not.toContain(handoff);
    expect(page.binding?.startsWith(`${sessionId}.`)).toBe(true);
  });

  it('binds the redeeming browser with an HttpOnly, SameSite=Lax device cookie of its own per session on /verify', async () => {
    const { verifyUrl, handoff, sessionId } = await newSession(emulator.url, WEB_CLIENT);
    const { response } = await openHostedPage(verifyUrl, handoff);
    const cookie = response.headers.getSetCookie().find((line) => line.startsWith('emu_device_'));
    expect(cookie).toMatch(
      new RegExp(
        `^emu_device_${sessionId}=[A-Za-z0-9_-]{24}; Max-Age=1800; Path=/verify; Expires=[^;]+; HttpOnly; SameSite=Lax$`,
      ),
    );
  });

  it('keeps two sessions opened in one browser (two tabs) each bound to its own device cookie', async () => {
    const first = await newSession(emulator.url, WEB_CLIENT);
    const second = await newSession(emulator.url, WEB_CLIENT);
    const firstPage = await openHostedPage(first.verifyUrl, first.handoff);
    const secondPage = await openHostedPage(second.verifyUrl, second.handoff);
    const bothCookies = `${firstPage.deviceCookie}; ${secondPage.deviceCookie}`;
    const [firstCode, secondCode] = await Promise.all([
      emulator.control.codeFor(first.sessionId),
      emulator.control.codeFor(second.sessionId),
    ]);
    expect((await submitCode(first.verifyUrl, firstPage, firstCode, bothCookies)).status).toBe(303);
    expect((await submitCode(second.verifyUrl, secondPage, secondCode, bothCookies)).status).toBe(303);
    expect((await readSession(emulator.url, WEB_CLIENT, first.sessionId)).body.status).toBe('verified');
    expect((await readSession(emulator.url, WEB_CLIENT, second.sessionId)).body.status).toBe('verified');
  });

  it('counts verify posts in stats', async () => {
    const { verifyUrl, handoff } = await newSession(emulator.url, WEB_CLIENT);
    await openHostedPage(verifyUrl, handoff);
    await openHostedPage(verifyUrl, handoff);
    expect((await emulator.control.stats()).verifyPosts).toBe(2);
  });
});

describe('the handoff is single-use: a second redemption gives 400', () => {
  it('refuses the second POST of the same hx with a friendly page', async () => {
    const { verifyUrl, handoff } = await newSession(emulator.url, WEB_CLIENT);
    expect((await openHostedPage(verifyUrl, handoff)).response.status).toBe(200);
    const second = await openHostedPage(verifyUrl, handoff);
    expect(second.response.status).toBe(400);
    expect(second.html).toContain(STALE_TEXT);
    expect(second.html).toContain('Go back to the site and start again');
  });
});

describe('the handoff lives 120 s: redemption after that gives 400', () => {
  it('accepts at 119 s', async () => {
    const { verifyUrl, handoff } = await newSession(emulator.url, WEB_CLIENT);
    await emulator.control.advanceClock(119);
    expect((await openHostedPage(verifyUrl, handoff)).response.status).toBe(200);
  });

  it('redeems at exactly 120 s and refuses 1 ms later (the TTL is measured from creation)', () => {
    let now = 1_700_000_000_000;
    const clock: TestClock = { now: () => now, advance: () => {}, reset: () => {} };
    const sessions = new SessionStore(clock);
    const input = {
      clientId: 'web-client',
      returnUrl: 'https://app.example/verify/return',
      platform: 'web',
      destination: '+15551234567',
      operationSensitivity: 'normal',
      userRef: 'user-1',
      state: 'state-1',
    } as const;
    const onTime = sessions.create(input);
    const late = sessions.create(input);
    now += HANDOFF_TTL_SECONDS * 1000;
    expect(sessions.redeemHandoff(onTime.handoff, 'device-1')).toMatchObject({ ok: true });
    now += 1;
    expect(sessions.redeemHandoff(late.handoff, 'device-1')).toEqual({ ok: false, why: 'expired' });
    expect(HANDOFF_TTL_SECONDS).toBe(120);
  });

  it('refuses at 121 s', async () => {
    const { verifyUrl, handoff } = await newSession(emulator.url, WEB_CLIENT);
    await emulator.control.advanceClock(121);
    const page = await openHostedPage(verifyUrl, handoff);
    expect(page.response.status).toBe(400);
    expect(page.html).toContain(STALE_TEXT);
  });
});

describe('a GET to verifyUrl with any query string gives 400', () => {
  it.each(['?hx=HANDOFF', '?session_id=x', '?a'])('GET /verify%s is 400', async (query) => {
    const { verifyUrl, handoff } = await newSession(emulator.url, WEB_CLIENT);
    const response = await fetch(`${verifyUrl}${query.replace('HANDOFF', handoff)}`, { redirect: 'manual' });
    expect(response.status).toBe(400);
  });

  it('GET /verify? (an empty query) is 400', async () => {
    // fetch drops an empty "?", so this one goes out raw.
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const { hostname, port } = new URL(emulator.url);
      get({ hostname, port, path: '/verify?' }, (response) => {
        response.resume();
        resolve(response.statusCode);
      }).on('error', reject);
    });
    expect(status).toBe(400);
  });

  it('a handoff sent in the query is not redeemed (the form POST still works)', async () => {
    const { verifyUrl, handoff } = await newSession(emulator.url, WEB_CLIENT);
    await fetch(`${verifyUrl}?hx=${handoff}`);
    expect((await openHostedPage(verifyUrl, handoff)).response.status).toBe(200);
  });

  it('a GET without a query is not a 400 (405: the page opens only by form POST)', async () => {
    const response = await fetch(`${emulator.url}/verify`);
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    expect(await response.text()).toContain('Open this page from the site');
  });
});

describe('a body that is not a form submission, or has no hx, gives 400', () => {
  it.each([
    ['a JSON body', 'application/json', (hx: string) => JSON.stringify({ hx })],
    ['a text/plain body', 'text/plain', (hx: string) => `hx=${hx}`],
    ['a form body without hx', 'application/x-www-form-urlencoded', () => 'other=1'],
    ['a form body with an empty hx', 'application/x-www-form-urlencoded', () => 'hx='],
    ['an empty form body', 'application/x-www-form-urlencoded', () => ''],
  ])('refuses %s and leaves the handoff unspent', async (_name, contentType, body) => {
    const { verifyUrl, handoff } = await newSession(emulator.url, WEB_CLIENT);
    const response = await fetch(verifyUrl, {
      method: 'POST',
      headers: { 'content-type': contentType },
      body: body(handoff),
    });
    expect(response.status).toBe(400);
    expect((await openHostedPage(verifyUrl, handoff)).response.status).toBe(200);
  });

  it('refuses an unknown hx', async () => {
    const { verifyUrl } = await newSession(emulator.url, WEB_CLIENT);
    expect((await postForm(verifyUrl, { hx: 'not-a-real-handoff' })).status).toBe(400);
  });
});

describe('the hosted page refuses to be framed and is not stored', () => {
  async function pages() {
    const { verifyUrl, handoff } = await newSession(emulator.url, WEB_CLIENT);
    const ok = (await openHostedPage(verifyUrl, handoff)).response;
    const refused = (await openHostedPage(verifyUrl, handoff)).response;
    const withQuery = await fetch(`${verifyUrl}?x=1`);
    return [ok, refused, withQuery];
  }

  it("sends X-Frame-Options: DENY and CSP frame-ancestors 'none' on every hosted response", async () => {
    for (const response of await pages()) {
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    }
  });

  it('sends Cache-Control: no-store and Referrer-Policy: no-referrer on every hosted response', async () => {
    for (const response of await pages()) {
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    }
  });

  it('runs under a tight CSP: no scripts, styles only by nonce, forms only to itself and the return URL', async () => {
    const { verifyUrl, handoff } = await newSession(emulator.url, WEB_CLIENT);
    const { response, html } = await openHostedPage(verifyUrl, handoff);
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    const nonce = /style-src 'nonce-([^']+)'/.exec(csp)?.[1];
    expect(html).toContain(`<style nonce="${nonce}">`);
    expect(csp).toContain("form-action 'self' http://localhost:3999;");
    expect(html).not.toContain('<script');
  });
});
