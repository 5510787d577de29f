/**
 * Passkeys on the hosted page, in real headless Chromium with a CDP virtual authenticator. The
 * hosted page is served as http://verify.localhost:<port> (the emulator's page host), the
 * integrator's stand-in on http://localhost:<port>: two sites, and a host name WebAuthn accepts.
 * The steps run in order on one browser (one authenticator): enrol, then use the passkey.
 */
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmulatorClient } from '../../emulator/index.ts';
import { addVirtualAuthenticator, launchBrowser } from '../support/browser.ts';
import { newSession, postForm, readSession, useTestEmulator } from '../support/emulator.ts';
import { handoffForm, startLanding, type Landing } from '../support/landing.ts';

const PAGE_HOST = 'verify.localhost';
const USER = 'usr_8f3a61'; // a stable id, as the spec asks

let landing: Landing;
let client: EmulatorClient;
let otherClient: EmulatorClient;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let cdp: CDPSession;
let authenticatorId: string;
let cspViolations: string[];

beforeAll(async () => {
  landing = await startLanding();
  const returnUrl = `${landing.origin}/verify/return`;
  client = { clientId: 'passkey-client', secret: 'passkey-secret-0123456789', returnUrl };
  otherClient = { clientId: 'passkey-other', secret: 'passkey-other-0123456789', returnUrl };
  browser = await launchBrowser();
  context = await browser.newContext();
  page = await context.newPage();
  page.setDefaultTimeout(10_000);
  cspViolations = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
  });
  ({ cdp, id: authenticatorId } = await addVirtualAuthenticator(context, page));
});
// Registered after the landing's hook: the clients' returnUrl is on the landing.
const emulator = useTestEmulator(() => ({ clients: [client, otherClient], pageHost: PAGE_HOST }));

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await landing?.close();
});

/** Creates a session and opens its hosted page from the stand-in site, as an integrator's form does. */
async function openHostedPage(owner: EmulatorClient, userRef: string) {
  const session = await newSession(emulator.url, owner, { userRef, destination: '+15550107788' });
  landing.page = handoffForm(session.verifyUrl, session.handoff);
  await page.goto(`${landing.origin}/page`);
  await page.getByRole('button', { name: 'Verify my phone' }).click();
  await page.waitForURL(session.verifyUrl);
  return session;
}

async function smsFor(sessionId: string) {
  return (await emulator.control.outbox()).filter((message) => message.sessionId === sessionId);
}

async function passkeys() {
  const response = await fetch(`${emulator.url}/_control/passkeys`);
  type Enrolled = { passkeys: Array<{ clientId: string; userRef: string; credentialId: string; uses: number }> };
  return ((await response.json()) as Enrolled).passkeys;
}

async function backAtSite(sessionId: string): Promise<void> {
  await page.waitForURL(`${landing.origin}/verify/return?**`);
  expect(landing.returns.at(-1)?.query.get('session_id')).toBe(sessionId);
}

const statusOf = async (owner: EmulatorClient, sessionId: string) =>
  (await readSession(emulator.url, owner, sessionId)).body;

/** The hosted page's own URL on the emulator's listening address (Node cannot resolve *.localhost). */

describe('passkeys on the hosted page (Chromium, virtual authenticator)', () => {
  it('the page host is another site: the handoff POST and the return are cross-site, cookies stay home', async () => {
    const next = await newSession(emulator.url, client, { userRef: 'site-probe' });
    landing.page = handoffForm(next.verifyUrl, next.handoff);
    await page.goto(`${landing.origin}/page`);
    const sent = page.waitForRequest((request) => request.url() === next.verifyUrl && request.method() === 'POST');
    await page.getByRole('button', { name: 'Verify my phone' }).click();
    const headers = await (await sent).allHeaders();
    expect(headers['sec-fetch-site']).toBe('cross-site');
    expect(headers.cookie ?? '').not.toContain('site_session');
    await page.locator('#code').fill(await emulator.control.codeFor(next.sessionId));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('button', { name: 'Not now' }).click();
    await backAtSite(next.sessionId);
    expect(landing.returns.at(-1)?.headers['sec-fetch-site']).toBe('cross-site');
    expect(landing.returns.at(-1)?.headers.cookie).toContain('site_session'); // a Lax cookie rides the top-level GET
    const cookies = await context.cookies();
    expect(cookies.find((cookie) => cookie.name === `emu_device_${next.sessionId}`)?.domain).toBe(PAGE_HOST);
    expect(cookies.find((cookie) => cookie.name === 'site_session')?.domain).toBe('localhost');
  });

  it('after an accepted SMS code offers a passkey; creating it stores it for this client and userRef', async () => {
    const session = await openHostedPage(client, USER);
    expect(await smsFor(session.sessionId)).toHaveLength(1); // no passkey yet: the SMS goes out at create
    await page.locator('#code').fill(await emulator.control.codeFor(session.sessionId));
    await page.getByRole('button', { name: 'Verify' }).click();

    await page.getByRole('heading', { name: 'Code accepted' }).waitFor();
    expect(await statusOf(client, session.sessionId)).toMatchObject({ status: 'verified' }); // final before the offer
    await page.getByRole('button', { name: 'Create a passkey' }).click();
    await backAtSite(session.sessionId);

    const stored = { clientId: client.clientId, userRef: USER, credentialId: expect.any(String), uses: 0 };
    expect(await passkeys()).toEqual([stored]);
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]?.rpId).toBe(PAGE_HOST);
    expect(cspViolations).toEqual([]);
  });

  it('a later session for the same client and userRef sends no SMS and ends verified by the passkey', async () => {
    const session = await openHostedPage(client, USER);
    await page.getByRole('heading', { name: 'Verify it’s you' }).waitFor();
    expect(await page.locator('#code').count()).toBe(0);
    await page.getByRole('button', { name: 'Use your passkey' }).click();
    await backAtSite(session.sessionId);

    const status = await statusOf(client, session.sessionId);
    expect(status).toMatchObject({ status: 'verified', userRef: USER, state: session.state });
    expect(await smsFor(session.sessionId)).toEqual([]);
    expect((await passkeys())[0]?.uses).toBe(1);
    expect(cspViolations).toEqual([]);
  });

  it('the SMS code stays available: "Text me a code instead" sends it then, and the code verifies', async () => {
    const session = await openHostedPage(client, USER);
    expect(await smsFor(session.sessionId)).toEqual([]);
    await page.getByRole('button', { name: 'Text me a code instead' }).click();
    await page.locator('#code').waitFor();
    const sms = await smsFor(session.sessionId);
    expect(sms).toHaveLength(1);
    await page.locator('#code').fill(sms[0]!.code);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('button', { name: 'Not now' }).click();
    await backAtSite(session.sessionId);
    expect(await statusOf(client, session.sessionId)).toMatchObject({ status: 'verified' });
    expect((await passkeys())[0]?.uses).toBe(1); // the passkey was not used
  });

  it('a changed userRef (say, the user’s new email) gets the SMS at create and the code page, no passkey', async () => {
    const session = await openHostedPage(client, 'alice.new@example.com');
    expect(await smsFor(session.sessionId)).toHaveLength(1);
    await page.locator('#code').waitFor();
    expect(await page.getByRole('button', { name: 'Use your passkey' }).count()).toBe(0);
    expect(await page.content()).not.toContain((await passkeys())[0]!.credentialId);
  });

  it('another client with the same userRef never sees the passkey either', async () => {
    const session = await openHostedPage(otherClient, USER);
    expect(await smsFor(session.sessionId)).toHaveLength(1);
    await page.locator('#code').waitFor();
    expect(await page.getByRole('button', { name: 'Use your passkey' }).count()).toBe(0);
  });

  it('a challenge answers once: a passkey answer replayed after a failed try is refused, still pending', async () => {
    const session = await openHostedPage(client, USER);
    let original = '';
    await page.route('**/verify/passkey', async (route) => {
      original = route.request().postData() ?? '';
      const fields = new URLSearchParams(original);
      const credential = JSON.parse(fields.get('credential') ?? '{}') as { response: { signature: string } };
      credential.response.signature = `${credential.response.signature.slice(0, -4)}AAAA`;
      fields.set('credential', JSON.stringify(credential));
      await route.continue({ postData: fields.toString() });
    });
    await page.getByRole('button', { name: 'Use your passkey' }).click();
    await page.getByText('That passkey could not be verified').waitFor();
    await page.unroute('**/verify/passkey');
    expect(await statusOf(client, session.sessionId)).toMatchObject({ status: 'pending' });

    // The untouched answer, from the same browser (its device cookie), for the challenge already spent.
    const device = (await context.cookies()).find((cookie) => cookie.name === `emu_device_${session.sessionId}`);
    const fields = Object.fromEntries(new URLSearchParams(original));
    const cookie = `${device?.name}=${device?.value}`;
    const replay = await postForm(`${session.verifyUrl}/passkey`, fields, cookie);
    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain('That passkey could not be verified'); // it signed the spent challenge
    expect(await statusOf(client, session.sessionId)).toMatchObject({ status: 'pending' });

    // The replay used up the challenge of the page the failed try left (one challenge per session,
    // the newest page's), so that page's answer is refused too; the page shown then works.
    const refused = page.waitForResponse((response) => response.url().endsWith('/verify/passkey'));
    await page.getByRole('button', { name: 'Use your passkey' }).click();
    expect((await refused).status()).toBe(400);
    expect(await statusOf(client, session.sessionId)).toMatchObject({ status: 'pending' });
    await page.getByRole('button', { name: 'Use your passkey' }).click();
    await backAtSite(session.sessionId);
    expect(await statusOf(client, session.sessionId)).toMatchObject({ status: 'verified' });
    expect(await smsFor(session.sessionId)).toEqual([]);
  });

  it('a passkey answer from a browser without the device cookie fails the session as device_changed', async () => {
    const session = await openHostedPage(client, USER);
    const binding = await page.locator('#passkey-form input[name="page_binding"]').inputValue();
    const fields = { page_binding: binding, credential: '{}' };
    const response = await postForm(`${session.verifyUrl}/passkey`, fields);
    expect(response.status).toBe(303);
    expect(await statusOf(client, session.sessionId)).toMatchObject({ status: 'failed', reason: 'device_changed' });
  });
});
