/**
 * Passkeys on the hosted page over HTTP, with a software authenticator: where the SMS goes when a
 * userRef has a passkey, and every refusal (challenge, origin, credential, userRef, device, binding).
 * The page host is verify.localhost; Node cannot resolve it, so requests go to 127.0.0.1 (same port).
 */
import { describe, expect, it } from 'vitest';
import {
  createSession,
  newSession,
  openHostedPage,
  postForm,
  readSession,
  sessionBody,
  OTHER_CLIENT,
  WEB_CLIENT,
  useTestEmulator,
} from '../support/emulator.ts';
import { SoftAuthenticator } from '../support/soft-authenticator.ts';
import type { EmulatorClient } from '../../emulator/index.ts';

const RP_ID = 'verify.localhost';
const emulator = useTestEmulator({ pageHost: RP_ID }, { resetEach: true });

const statusOf = async (sessionId: string, client = WEB_CLIENT) =>
  (await readSession(emulator.url, client, sessionId)).body;
const smsFor = async (sessionId: string) =>
  (await emulator.control.outbox()).filter((message) => message.sessionId === sessionId);
type Enrolled = { passkeys: Array<{ clientId: string; userRef: string }> };
const passkeys = async () => ((await (await fetch(`${emulator.url}/_control/passkeys`)).json()) as Enrolled).passkeys;

/** A signed `navigator.credentials.get` answer as the form field's JSON. */
const assertion = (authenticator: SoftAuthenticator, challenge: string, origin: string) =>
  JSON.stringify(authenticator.assert({ challenge, origin, rpId: RP_ID }));

/** The WebAuthn options a passkey page carries in data-options. */
function optionsOf(html: string): { challenge: string } {
  const raw = /data-options="([^"]+)"/.exec(html)?.[1];
  if (raw === undefined) throw new Error('no passkey form on this page');
  const json = raw.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));
  return JSON.parse(json) as { challenge: string };
}

/** A session with its hosted page opened by this "browser" (its device cookie). */
async function opened(client: EmulatorClient = WEB_CLIENT, overrides = {}) {
  const created = await newSession(emulator.url, client, overrides);
  const verifyUrl = created.verifyUrl;
  const page = await openHostedPage(verifyUrl, created.handoff);
  expect(page.response.status).toBe(200);
  const origin = new URL(created.verifyUrl).origin; // what the browser would report: http://verify.localhost:<port>
  const post = (path: string, fields: Record<string, string>, cookie = page.deviceCookie) =>
    postForm(`${verifyUrl}${path}`, { page_binding: page.binding ?? '', ...fields }, cookie);
  return { ...created, verifyUrl, origin, page, post };
}

/** Verifies a session by SMS code and saves the authenticator's passkey for its client and userRef. */
async function enrol(authenticator: SoftAuthenticator, client: EmulatorClient = WEB_CLIENT, userRef = 'user-42') {
  const session = await opened(client, { userRef });
  const offer = await session.post('/code', { code: await emulator.control.codeFor(session.sessionId) });
  expect(offer.status).toBe(200);
  const { challenge } = optionsOf(await offer.text());
  const credential = authenticator.register({ challenge, origin: session.origin, rpId: RP_ID });
  const saved = await session.post('/passkey/enrol', { credential: JSON.stringify(credential) });
  expect(saved.status).toBe(303);
  return session;
}

describe('enrolment after an accepted SMS code', () => {
  it('an accepted code ends the session verified, then offers a passkey; stored per client and userRef', async () => {
    const session = await opened();
    const offer = await session.post('/code', { code: await emulator.control.codeFor(session.sessionId) });
    expect(offer.status).toBe(200);
    expect(offer.headers.get('content-security-policy')).toMatch(/script-src 'nonce-[^']+'/);
    expect(await statusOf(session.sessionId)).toMatchObject({ status: 'verified' });
    const { challenge } = optionsOf(await offer.text());
    const registration = new SoftAuthenticator().register({ challenge, origin: session.origin, rpId: RP_ID });
    const credential = JSON.stringify(registration);
    const saved = await session.post('/passkey/enrol', { credential });
    expect(saved.status).toBe(303);
    const query = `session_id=${encodeURIComponent(session.sessionId)}&state=${encodeURIComponent(session.state)}`;
    expect(saved.headers.get('location')).toBe(`${WEB_CLIENT.returnUrl}?${query}`);
    expect(await passkeys()).toEqual([expect.objectContaining({ clientId: WEB_CLIENT.clientId, userRef: 'user-42' })]);

    // The challenge answered once: the same answer again, or another device's over it, is refused.
    expect((await session.post('/passkey/enrol', { credential })).status).toBe(400);
    const another = new SoftAuthenticator().register({ challenge, origin: session.origin, rpId: RP_ID });
    expect((await session.post('/passkey/enrol', { credential: JSON.stringify(another) })).status).toBe(400);
    expect(await passkeys()).toHaveLength(1);
  });

  it('"Not now" returns to the site and stores nothing; from another browser it is a 400', async () => {
    const session = await opened();
    await session.post('/code', { code: await emulator.control.codeFor(session.sessionId) });
    expect((await session.post('/continue', {}, '')).status).toBe(400);
    const back = await session.post('/continue', {});
    expect(back.status).toBe(303);
    expect(await passkeys()).toEqual([]);
  });

  it('refuses enrolment: pending session, another browser, another origin (400, nothing stored)', async () => {
    const pending = await opened();
    const forged = new SoftAuthenticator().register({ challenge: 'AAAA', origin: pending.origin, rpId: RP_ID });
    expect((await pending.post('/passkey/enrol', { credential: JSON.stringify(forged) })).status).toBe(400);
    expect(await statusOf(pending.sessionId)).toMatchObject({ status: 'pending' });

    const session = await opened();
    const offer = await session.post('/code', { code: await emulator.control.codeFor(session.sessionId) });
    const { challenge } = optionsOf(await offer.text());
    const authenticator = new SoftAuthenticator();
    const fromElsewhere = authenticator.register({ challenge, origin: session.origin, rpId: RP_ID });
    expect((await session.post('/passkey/enrol', { credential: JSON.stringify(fromElsewhere) }, '')).status).toBe(400);
    const wrongOrigin = authenticator.register({ challenge, origin: 'http://evil.localhost:1234', rpId: RP_ID });
    const refused = await session.post('/passkey/enrol', { credential: JSON.stringify(wrongOrigin) });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('The passkey could not be saved');
    expect(await passkeys()).toEqual([]);
    expect(await statusOf(session.sessionId)).toMatchObject({ status: 'verified' });
  });
});

describe('a later session of the same client and userRef', () => {
  it('sends no SMS at create (nor on an idempotent replay); the page offers the passkey and the SMS', async () => {
    await enrol(new SoftAuthenticator());
    const smsBefore = (await emulator.control.stats()).smsSent;
    const body = sessionBody(WEB_CLIENT);
    const created = await createSession(emulator.url, WEB_CLIENT, body, { idempotencyKey: 'k-passkey-1' });
    const replayed = await createSession(emulator.url, WEB_CLIENT, body, { idempotencyKey: 'k-passkey-1' });
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(await smsFor(created.body.sessionId as string)).toEqual([]);
    expect((await emulator.control.stats()).smsSent).toBe(smsBefore);

    const page = await openHostedPage(created.body.verifyUrl as string, created.body.handoff as string);
    expect(page.html).toContain('Use your passkey');
    expect(page.html).toContain('Text me a code instead');
    expect(page.html).not.toContain('id="code"');

    // Asked for, the code goes out once, counted under the create's key; asking again sends no second one.
    const fields = { page_binding: page.binding ?? '' };
    const verifyUrl = created.body.verifyUrl as string;
    expect((await postForm(`${verifyUrl}/sms`, fields, page.deviceCookie)).status).toBe(200);
    expect((await postForm(`${verifyUrl}/sms`, fields, page.deviceCookie)).status).toBe(200);
    expect(await smsFor(created.body.sessionId as string)).toHaveLength(1);
    expect((await emulator.control.stats()).smsByIdempotencyKey['k-passkey-1']).toBe(1);
  });

  it('a passkey answer ends it verified with no SMS sent', async () => {
    const authenticator = new SoftAuthenticator();
    await enrol(authenticator);
    const session = await opened();
    const { challenge } = optionsOf(session.page.html);
    const answer = await session.post('/passkey', { credential: assertion(authenticator, challenge, session.origin) });
    expect(answer.status).toBe(303);
    const status = await statusOf(session.sessionId);
    expect(status).toMatchObject({ status: 'verified', userRef: 'user-42', state: session.state });
    expect(await smsFor(session.sessionId)).toEqual([]);
  });

  it('a code submitted before one was asked for is refused (400): no attempt used, no SMS, still pending', async () => {
    await enrol(new SoftAuthenticator());
    const session = await opened();
    const response = await session.post('/code', { code: '123456' });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('Ask for a code by SMS first');
    expect(await smsFor(session.sessionId)).toEqual([]);
    expect(session.page.html).toContain('Use your passkey');
    const code = await session.post('/sms', {});
    expect(await code.text()).toContain('5 attempts left');
    expect(await statusOf(session.sessionId)).toMatchObject({ status: 'pending' });
  });

  it('refuses a passkey answer for another origin, of an unknown credential, or replayed: 400, pending', async () => {
    const authenticator = new SoftAuthenticator();
    await enrol(authenticator);
    const session = await opened();
    const first = optionsOf(session.page.html).challenge;

    const otherOrigin = await session.post('/passkey', {
      credential: assertion(authenticator, first, 'http://evil.localhost:1'),
    });
    expect(otherOrigin.status).toBe(400);
    const second = optionsOf(await otherOrigin.text()).challenge;
    expect(second).not.toBe(first);

    const stranger = await session.post('/passkey', {
      credential: assertion(new SoftAuthenticator(), second, session.origin),
    });
    expect(stranger.status).toBe(400);
    // The challenge `second` was spent by that refused answer: a valid signature over it no longer counts.
    const replayed = await session.post('/passkey', { credential: assertion(authenticator, second, session.origin) });
    expect(replayed.status).toBe(400);
    expect(await statusOf(session.sessionId)).toMatchObject({ status: 'pending' });
  });

  it('a challenge older than 5 minutes (virtual clock) is refused', async () => {
    const authenticator = new SoftAuthenticator();
    await enrol(authenticator);
    const session = await opened();
    const { challenge } = optionsOf(session.page.html);
    await emulator.control.advanceClock(5 * 60 + 1);
    const late = await session.post('/passkey', { credential: assertion(authenticator, challenge, session.origin) });
    expect(late.status).toBe(400);
    expect(await late.text()).toContain('expired or was already used');
    expect(await statusOf(session.sessionId)).toMatchObject({ status: 'pending' });
  });

  it('a session never opened by its handoff cannot be verified by passkey: 400, still pending', async () => {
    const authenticator = new SoftAuthenticator();
    const enrolled = await enrol(authenticator);
    const created = await newSession(emulator.url, WEB_CLIENT, { userRef: 'user-42' });
    const credential = assertion(authenticator, 'AAAA', enrolled.origin);
    const fields = { page_binding: `${created.sessionId}.forged`, credential };
    const response = await postForm(`${created.verifyUrl}/passkey`, fields);
    expect(response.status).toBe(400);
    expect(await statusOf(created.sessionId)).toMatchObject({ status: 'pending' });
  });

  it('a forged page binding on the passkey form fails the session as session_binding_failed', async () => {
    const authenticator = new SoftAuthenticator();
    await enrol(authenticator);
    const session = await opened();
    const { challenge } = optionsOf(session.page.html);
    const binding = session.page.binding ?? '';
    const forged = `${binding.slice(0, -1)}${binding.endsWith('A') ? 'B' : 'A'}`;
    const credential = assertion(authenticator, challenge, session.origin);
    const fields = { page_binding: forged, credential };
    const response = await postForm(`${session.verifyUrl}/passkey`, fields, session.page.deviceCookie);
    expect(response.status).toBe(303);
    expect(await statusOf(session.sessionId)).toMatchObject({ status: 'failed', reason: 'session_binding_failed' });
  });
});

describe('another userRef or another client never sees (nor may use) the passkey', () => {
  it('another userRef: SMS at create, the code page, and a passkey answer refused with 400', async () => {
    const authenticator = new SoftAuthenticator();
    const enrolled = await enrol(authenticator);
    const session = await opened(WEB_CLIENT, { userRef: 'user-42@example.com' });
    expect(await smsFor(session.sessionId)).toHaveLength(1);
    expect(session.page.html).toContain('id="code"');
    expect(session.page.html).not.toContain(authenticator.id);
    const response = await session.post('/passkey', { credential: assertion(authenticator, 'AAAA', enrolled.origin) });
    expect(response.status).toBe(400);
    expect(await statusOf(session.sessionId)).toMatchObject({ status: 'pending' });
  });

  it('another client with the same userRef: SMS at create and the code page', async () => {
    await enrol(new SoftAuthenticator());
    const session = await opened(OTHER_CLIENT);
    expect(await smsFor(session.sessionId)).toHaveLength(1);
    expect(session.page.html).toContain('id="code"');
  });
});
