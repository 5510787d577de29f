/**
 * A session that ends before its handoff is redeemed: the verify page answers the handoff POST with
 * a 303 to the registered returnUrl, and Chromium checks the handoff page's `form-action` on that
 * redirect too. App on localhost, emulator on 127.0.0.1 (another origin, another site).
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../support/browser.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

let app: TestApp;
let browser: Browser;

beforeAll(async () => {
  app = await startTestApp();
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await app?.close();
});

describe('handoff page for a session that already ended', () => {
  it("follows the verify page's redirect back to the app's landing, which shows the outcome", async () => {
    // No script, so the page waits for its Continue button: the session ends while it is shown.
    const context = await browser.newContext({ javaScriptEnabled: false });
    const login = await context.request.post(`${app.url}/test/login`, { form: { user: 'alice' } });
    expect(login.status()).toBe(200);
    const page = await context.newPage();
    const blocked: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) blocked.push(message.text());
    });
    await page.goto(`${app.url}/form`);
    await page.click('#go');
    await page.waitForURL(`${app.url}/verify/start`);
    const handoff = await page.inputValue('#verify-kit-handoff input[name="hx"]');
    const session = await app.emulator.control.sessionByHandoff(handoff);
    await app.emulator.control.completeSession(session.sessionId, 'failed', 'otp_locked');

    await page.click('#verify-kit-handoff button');
    const landed = page.waitForURL((url) => url.href.startsWith(`${app.returnUrl}?`), { timeout: 10_000 });
    // A blocked redirect leaves the tab where it was; what the browser refused says why.
    await landed.catch(() => undefined);
    expect(blocked).toEqual([]);
    await landed;
    expect(new URL(page.url()).searchParams.get('session_id')).toBe(session.sessionId);
    expect(await page.textContent('h1')).toBe('Too many incorrect codes');
    expect(app.grants(session.sessionId)).toBe(0);
    await context.close();
  });
});
