/** The hosted page in real headless Chromium: a full flow from an integrator's page, and a refused iframe. */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EmulatorClient } from '../../emulator/index.ts';
import { launchBrowser } from '../support/browser.ts';
import { newSession, readSession, useTestEmulator } from '../support/emulator.ts';
import { handoffForm, startLanding, type Landing } from '../support/landing.ts';

let landing: Landing;
let client: EmulatorClient;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let cspViolations: string[];

beforeAll(async () => {
  landing = await startLanding();
  client = {
    clientId: 'browser-client',
    secret: 'browser-secret-0123456789',
    returnUrl: `${landing.origin}/verify/return`,
  };
  browser = await launchBrowser();
});
// Registered after the landing's hook: the client's returnUrl is on the landing.
const emulator = useTestEmulator(() => ({ clients: [client] }));

afterAll(async () => {
  await browser?.close();
  await landing?.close();
});

beforeEach(async () => {
  landing.returns.length = 0;
  context = await browser.newContext();
  page = await context.newPage();
  page.setDefaultTimeout(10_000); // a blocked navigation should fail fast, not at the test timeout
  cspViolations = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
  });
});

afterEach(() => context.close());

describe('hosted page in Chromium', () => {
  it('completes a flow: form POST of hx, a wrong code, the right code, back at returnUrl with session_id and state', async () => {
    const session = await newSession(emulator.url, client, { state: 'st/ate 1&2' });
    landing.page = handoffForm(session.verifyUrl, session.handoff);
    await page.goto(`${landing.origin}/page`);
    await page.getByRole('button', { name: 'Verify my phone' }).click();

    const codeInput = page.getByLabel('Verification code');
    await codeInput.waitFor();
    expect(page.url()).toBe(session.verifyUrl); // nothing in the URL
    expect(await codeInput.getAttribute('autocomplete')).toBe('one-time-code');

    const code = await emulator.control.codeFor(session.sessionId);
    await codeInput.fill(code === '000000' ? '111111' : '000000');
    await page.getByRole('button', { name: 'Verify' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('That code is not correct');

    await page.getByLabel('Verification code').fill(code);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL(`${landing.origin}/verify/return?**`);

    expect(landing.returns).toHaveLength(1);
    expect(landing.returns[0]?.query.get('session_id')).toBe(session.sessionId);
    expect(landing.returns[0]?.query.get('state')).toBe('st/ate 1&2');
    expect((await readSession(emulator.url, client, session.sessionId)).body.status).toBe('verified');
    expect(cspViolations).toEqual([]); // the nonce'd styles and the redirect to returnUrl are allowed
  });

  it('refuses to render inside an iframe', async () => {
    const session = await newSession(emulator.url, client);
    landing.page = handoffForm(session.verifyUrl, session.handoff, 'hosted');
    await page.goto(`${landing.origin}/page`);
    const answered = page.waitForResponse((response) => response.url() === session.verifyUrl);
    await page.getByRole('button', { name: 'Verify my phone' }).click();
    const response = await answered;

    expect(response.status()).toBe(200); // the service answered, but the browser must not show it framed
    expect(response.headers()['x-frame-options']).toBe('DENY');
    expect(response.headers()['content-security-policy']).toContain("frame-ancestors 'none'");

    const frame = page.frame({ name: 'hosted' });
    await expect.poll(() => frame?.url()).toMatch(/^(about:blank|chrome-error:)/);
    const frameText = await frame?.evaluate(() => document.body?.innerText ?? '').catch(() => '');
    expect(frameText).not.toContain('Enter the code');
    expect(await page.frameLocator('iframe[name="hosted"]').getByLabel('Verification code').count()).toBe(0);
  });
});
