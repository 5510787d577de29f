/**
 * A session that ends before its handoff is redeemed: the verify page answers the handoff POST with
 * a 303 to the registered returnUrl, and Chromium checks the handoff page's `form-action` on that
 * redirect too. App on localhost, emulator on 127.0.0.1 (another origin, another site).
 */
import { describe, expect, it } from 'vitest';
import { useAppInBrowser } from '../support/app-in-browser.ts';

const suite = useAppInBrowser();

describe('handoff page for a session that already ended', () => {
  it("follows the verify page's redirect back to the app's landing, which shows the outcome", async () => {
    // No script, so the page waits for its Continue button: the session ends while it is shown.
    const { context, page, refused } = await suite.signedInPage({ javaScriptEnabled: false });
    await page.goto(`${suite.app.url}/form`);
    await page.click('#go');
    await page.waitForURL(`${suite.app.url}/verify/start`);
    const handoff = await page.inputValue('#verify-kit-handoff input[name="hx"]');
    const session = await suite.app.emulator.control.sessionByHandoff(handoff);
    await suite.app.emulator.control.completeSession(session.sessionId, 'failed', 'otp_locked');

    await page.click('#verify-kit-handoff button');
    const landed = page.waitForURL((url) => url.href.startsWith(`${suite.app.returnUrl}?`), { timeout: 10_000 });
    // A blocked redirect leaves the tab where it was; what the browser refused says why.
    await landed.catch(() => undefined);
    expect(refused).toEqual([]);
    await landed;
    expect(new URL(page.url()).searchParams.get('session_id')).toBe(session.sessionId);
    expect(await page.textContent('h1')).toBe('Too many incorrect codes');
    expect(suite.app.grants(session.sessionId)).toBe(0);
    await context.close();
  });
});
