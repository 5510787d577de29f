/**
 * The auto-submit page in a real Chromium, under helmet() defaults (whose `form-action 'self'`
 * would block a cross-origin form): app on localhost, emulator on 127.0.0.1 (another site).
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { parseHandoffPage } from '../support/agent.ts';
import { useAppInBrowser } from '../support/app-in-browser.ts';
import { leaks, newSeen } from '../support/seen.ts';

const suite = useAppInBrowser();
const seen = newSeen();

/** A tab signed in to the app whose requests are kept for the leak check. */
async function signedInPage(options: { javaScriptEnabled?: boolean } = {}) {
  const tab = await suite.signedInPage(options);
  tab.page.on('request', (request) => {
    seen.urls.push(request.url());
    // the handoff as the verify page received it, for the leak check
    const hx = request.method() === 'POST' ? new URLSearchParams(request.postData() ?? '').get('hx') : null;
    if (hx) seen.handoffs.push(hx);
  });
  return tab;
}

async function enterCode(page: Page) {
  await page.waitForURL((url) => url.href.startsWith(suite.app.emulator.url), { timeout: 10_000 });
  const code = await suite.app.emulator.control.codeFor((await suite.app.latestAttempt()).sessionId);
  await page.fill('#code', code);
  await Promise.all([
    page.waitForURL(`${suite.app.url}/done/badge`, { timeout: 10_000 }),
    page.click('button[type=submit]'),
  ]);
}

describe('auto-submit page in Chromium under helmet()', () => {
  it('submits the handoff to the cross-origin verify page by itself, and the whole flow ends on the successPath with one fulfilment', async () => {
    const { context, page, refused } = await signedInPage();
    const posts = (await suite.app.emulator.control.stats()).verifyPosts;
    await page.goto(`${suite.app.url}/form`);
    await page.click('#go');
    await enterCode(page);
    expect(await page.textContent('#done')).toBe('done badge');
    expect(suite.app.grants((await suite.app.latestAttempt()).sessionId)).toBe(1);
    expect((await suite.app.emulator.control.stats()).verifyPosts).toBe(posts + 1);
    expect(refused).toEqual([]);
    await context.close();
  });

  it('without JavaScript, the visible Continue button opens the verify page', async () => {
    const { context, page } = await signedInPage({ javaScriptEnabled: false });
    await page.goto(`${suite.app.url}/form`);
    await page.click('#go');
    await page.waitForURL(`${suite.app.url}/verify/start`);
    await page.click('#verify-kit-handoff button');
    await enterCode(page);
    expect(suite.app.grants((await suite.app.latestAttempt()).sessionId)).toBe(1);
    await context.close();
  });

  it('a restored copy of a used auto-submit page never re-sends its handoff: it goes to the start-again page', async () => {
    const { context, page } = await signedInPage();
    const csrf = ((await (await context.request.get(`${suite.app.url}/test/csrf`)).json()) as { csrf: string }).csrf;
    const started = await context.request.post(`${suite.app.url}/verify/start`, {
      form: { _csrf: csrf, action: 'grant_badge' },
      headers: { origin: suite.app.url },
    });
    expect(started.status()).toBe(200);
    const body = await started.text();
    seen.handoffs.push(parseHandoffPage(body)!.handoff);
    // Serve that very page (same bytes, same nonce CSP) at an app URL, twice in one tab: the first
    // showing submits it, the second is a restored copy (as back/forward or a cache would give).
    const copyUrl = `${suite.app.url}/restored-handoff-page`;
    await page.route(copyUrl, (route) => route.fulfill({ status: 200, headers: started.headers(), body }));
    const posts = (await suite.app.emulator.control.stats()).verifyPosts;
    await page.goto(copyUrl);
    await page.waitForURL((url) => url.href.startsWith(suite.app.emulator.url));
    expect((await suite.app.emulator.control.stats()).verifyPosts).toBe(posts + 1);

    await page.goto(copyUrl);
    await page.waitForURL(`${suite.app.url}/verify/start-again?action=grant_badge`);
    expect(await page.textContent('h1')).toBe('This verification page was already used');
    expect(await page.locator('form[action="/verify/start"] input[name="action"]').getAttribute('value')).toBe(
      'grant_badge',
    );
    expect((await suite.app.emulator.control.stats()).verifyPosts).toBe(posts + 1);
    await context.close();
  });

  it('leaks: none in this suite', () => {
    expect(seen.handoffs.length).toBeGreaterThanOrEqual(2);
    expect(leaks(suite.app, seen)).toEqual([]);
  });
});
