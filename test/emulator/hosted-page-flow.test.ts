import { describe, expect, it } from 'vitest';
import {
  MOBILE_CLIENT,
  postForm,
  WEB_CLIENT,
  newSession,
  openHostedPage,
  readSession,
  submitCode,
  useTestEmulator,
} from '../support/emulator.ts';
import type { EmulatorClient } from '../../emulator/index.ts';

const emulator = useTestEmulator({}, { resetEach: true });

/** A session whose hosted page is open in one "browser" (its device cookie). */
async function openedSession(client: EmulatorClient = WEB_CLIENT, overrides = {}) {
  const created = await newSession(emulator.url, client, overrides);
  const page = await openHostedPage(created.verifyUrl, created.handoff);
  expect(page.response.status).toBe(200);
  const code = await emulator.control.codeFor(created.sessionId);
  const wrongCode = code === '000000' ? '111111' : '000000';
  return { ...created, page, code, wrongCode };
}

const statusOf = async (sessionId: string, client = WEB_CLIENT) =>
  (await readSession(emulator.url, client, sessionId)).body;

function expectReturnRedirect(response: Response, client: EmulatorClient, sessionId: string, state: string) {
  expect(response.status).toBe(303);
  expect(response.headers.get('location')).toBe(
    `${client.returnUrl}?session_id=${encodeURIComponent(sessionId)}&state=${encodeURIComponent(state)}`,
  );
}

describe('OTP accepted: pending -> verified, browser returns to returnUrl?session_id&state', () => {
  it('answers 303 to the registered URL with both parameters encoded', async () => {
    const state = 'a b&c=d/é+?#%';
    const session = await openedSession(WEB_CLIENT, { state });
    const response = await submitCode(session.verifyUrl, session.page, session.code);
    expectReturnRedirect(response, WEB_CLIENT, session.sessionId, state);
    const query = new URL(response.headers.get('location') ?? '').searchParams;
    expect(query.get('state')).toBe(state);
    expect(query.get('session_id')).toBe(session.sessionId);
    expect(await statusOf(session.sessionId)).toMatchObject({ status: 'verified', state });
  });

  it('for a mobile client appends the parameters to the registered deep link', async () => {
    const session = await openedSession(MOBILE_CLIENT, { state: 'm/1 2' });
    expect(session.page.response.headers.get('content-security-policy')).toContain(
      "form-action 'self' com.example.app:;",
    );
    const response = await submitCode(session.verifyUrl, session.page, session.code);
    expectReturnRedirect(response, MOBILE_CLIENT, session.sessionId, 'm/1 2');
    expect(response.headers.get('location')).toMatch(/^com\.example\.app:\/\/verify\/return\?session_id=/);
  });
});

describe('platform and the return target are set by the backend, not the browser', () => {
  it('ignores platform, returnUrl and state fields a browser adds to the hosted forms', async () => {
    const created = await newSession(emulator.url, WEB_CLIENT);
    const opened = await postForm(created.verifyUrl, {
      hx: created.handoff,
      platform: 'mobile',
      returnUrl: 'https://evil.example/',
    });
    const html = await opened.text();
    const binding = /name="page_binding" value="([^"]+)"/.exec(html)?.[1] ?? '';
    const cookie = opened.headers.getSetCookie()[0]?.split(';')[0];
    const code = await emulator.control.codeFor(created.sessionId);
    const response = await postForm(
      `${created.verifyUrl}/code`,
      { page_binding: binding, code, returnUrl: 'https://evil.example/', state: 'forged' },
      cookie,
    );
    expectReturnRedirect(response, WEB_CLIENT, created.sessionId, created.state);
  });
});

describe('a wrong code shows the page again; the 5th wrong code ends it as failed/otp_locked', () => {
  it('shows the page again with an error and the attempts left, still pending', async () => {
    const session = await openedSession();
    const response = await submitCode(session.verifyUrl, session.page, session.wrongCode);
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain('role="alert"');
    expect(html).toContain('That code is not correct');
    expect(html).toContain('4 attempts left');
    expect(html).toContain('aria-invalid="true"');
    expect((await statusOf(session.sessionId)).status).toBe('pending');
  });

  it('4 wrong codes still allow the right one', async () => {
    const session = await openedSession();
    for (let attempt = 0; attempt < 4; attempt += 1)
      await submitCode(session.verifyUrl, session.page, session.wrongCode);
    expectReturnRedirect(
      await submitCode(session.verifyUrl, session.page, session.code),
      WEB_CLIENT,
      session.sessionId,
      session.state,
    );
    expect((await statusOf(session.sessionId)).status).toBe('verified');
  });

  it('the 5th wrong code fails the session as otp_locked and returns the browser with the same query shape', async () => {
    const session = await openedSession();
    for (let attempt = 0; attempt < 4; attempt += 1) {
      expect((await submitCode(session.verifyUrl, session.page, session.wrongCode)).status).toBe(200);
    }
    expectReturnRedirect(
      await submitCode(session.verifyUrl, session.page, session.wrongCode),
      WEB_CLIENT,
      session.sessionId,
      session.state,
    );
    expect(await statusOf(session.sessionId)).toMatchObject({ status: 'failed', reason: 'otp_locked' });
  });

  it('input that is not 6 digits asks again without using an attempt', async () => {
    const session = await openedSession();
    const response = await submitCode(session.verifyUrl, session.page, '12ab');
    const html = await response.text();
    expect(html).toContain('Enter the 6 digits');
    expect(html).toContain('5 attempts left');
  });
});

describe('a code from another browser than the one that redeemed the handoff: failed/device_changed', () => {
  it('fails the session when the device cookie is missing', async () => {
    const session = await openedSession();
    const response = await submitCode(session.verifyUrl, session.page, session.code, '');
    expectReturnRedirect(response, WEB_CLIENT, session.sessionId, session.state);
    expect(await statusOf(session.sessionId)).toMatchObject({ status: 'failed', reason: 'device_changed' });
  });

  it('fails the session when the cookie is another browser’s', async () => {
    const session = await openedSession();
    const otherBrowser = await openedSession();
    const response = await submitCode(session.verifyUrl, session.page, session.code, otherBrowser.page.deviceCookie);
    expectReturnRedirect(response, WEB_CLIENT, session.sessionId, session.state);
    expect(await statusOf(session.sessionId)).toMatchObject({ status: 'failed', reason: 'device_changed' });
  });
});

describe('a tampered page binding: failed/session_binding_failed', () => {
  it('fails the session when the binding’s MAC is altered', async () => {
    const session = await openedSession();
    const binding = session.page.binding ?? '';
    const tampered = `${binding.slice(0, -1)}${binding.endsWith('A') ? 'B' : 'A'}`;
    const response = await submitCode(
      session.verifyUrl,
      { binding: tampered },
      session.code,
      session.page.deviceCookie,
    );
    expectReturnRedirect(response, WEB_CLIENT, session.sessionId, session.state);
    expect(await statusOf(session.sessionId)).toMatchObject({ status: 'failed', reason: 'session_binding_failed' });
  });

  it('answers a binding for no known session with a 400 page and changes nothing', async () => {
    const session = await openedSession();
    const response = await submitCode(
      session.verifyUrl,
      { binding: 'ses_unknown.abc' },
      session.code,
      session.page.deviceCookie,
    );
    expect(response.status).toBe(400);
    expect((await statusOf(session.sessionId)).status).toBe('pending');
  });
});

describe('ended sessions stay ended', () => {
  it('a later submit from the same browser returns it to the site again without changing the outcome', async () => {
    const session = await openedSession();
    await submitCode(session.verifyUrl, session.page, session.code);
    const again = await submitCode(session.verifyUrl, session.page, session.wrongCode);
    expectReturnRedirect(again, WEB_CLIENT, session.sessionId, session.state);
    expect((await statusOf(session.sessionId)).status).toBe('verified');
  });
});

describe('the code is valid for 10 minutes (emulator choice)', () => {
  it('accepts the code at 9 minutes', async () => {
    const session = await openedSession();
    await emulator.control.advanceClock(9 * 60);
    expectReturnRedirect(
      await submitCode(session.verifyUrl, session.page, session.code),
      WEB_CLIENT,
      session.sessionId,
      session.state,
    );
    expect((await statusOf(session.sessionId)).status).toBe('verified');
  });

  it('after 10 minutes even the right code ends the session as failed/otp_locked', async () => {
    const session = await openedSession();
    await emulator.control.advanceClock(10 * 60 + 1);
    expectReturnRedirect(
      await submitCode(session.verifyUrl, session.page, session.code),
      WEB_CLIENT,
      session.sessionId,
      session.state,
    );
    expect(await statusOf(session.sessionId)).toMatchObject({ status: 'failed', reason: 'otp_locked' });
  });
});

describe('the page shows what the user needs', () => {
  it('shows the masked phone number and a labelled 6-digit input', async () => {
    const session = await openedSession(WEB_CLIENT, { destination: '+15557654321' });
    expect(session.page.html).toContain('+1••••••••21');
    expect(session.page.html).not.toContain('5557654321');
    expect(session.page.html).toContain('<label for="code">');
    expect(session.page.html).toContain('pattern="\\d{6}"');
  });
});
