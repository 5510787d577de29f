/**
 * The axe check itself: on a page with known WCAG failures (a timed meta refresh, no lang, an
 * unlabelled field, low contrast) it reports each by rule id and target, and the assertion fails.
 * Proves the page checks elsewhere can fail.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, expectNoAxeViolations, formatViolations } from '../support/axe.ts';
import { launchBrowser } from '../support/browser.ts';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

const BAD_PAGE = `<!doctype html><html><head><meta http-equiv="refresh" content="3"><title>Bad</title></head>
<body><main><h1>Still confirming</h1><p style="color:#bbb;background:#fff">Low contrast</p>
<form><input id="code" name="code" type="text"></form></main></body></html>`;

describe('expectNoAxeViolations', () => {
  it('reports rule id and target for each violation on a bad page, under a strict CSP, and fails', async () => {
    const page = await browser.newPage();
    await page.route('http://localhost/bad', (route) =>
      route.fulfill({
        contentType: 'text/html',
        headers: { 'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'" },
        body: BAD_PAGE,
      }),
    );
    await page.goto('http://localhost/bad');
    const violations = await axeViolations(page);
    expect(violations.map((v) => v.id).sort()).toEqual(['color-contrast', 'html-has-lang', 'label', 'meta-refresh']);
    const report = formatViolations(violations);
    expect(report).toMatch(/^meta-refresh \(\w+\) at meta: /m);
    expect(report).toMatch(/^label \(critical\) at #code: /m);
    await expect(expectNoAxeViolations(page, 'a bad page')).rejects.toThrow(/axe violations on a bad page/);
    await page.close();
  });

  it('on the later documents of a page checked before (axe then loaded with each document), reports the same', async () => {
    const page = await browser.newPage();
    await page.route('http://localhost/good', (route) =>
      route.fulfill({
        contentType: 'text/html',
        headers: { 'content-security-policy': "default-src 'none'" },
        body: '<!doctype html><html lang="en"><head><title>Good</title></head><body><main><h1>Fine</h1></main></body></html>',
      }),
    );
    await page.route('http://localhost/bad', (route) =>
      route.fulfill({
        contentType: 'text/html',
        headers: { 'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'" },
        body: BAD_PAGE,
      }),
    );
    await page.goto('http://localhost/good');
    await expectNoAxeViolations(page, 'a good page');
    await page.goto('http://localhost/bad');
    expect(await page.evaluate(() => typeof (window as { axe?: unknown }).axe)).toBe('object');
    const violations = await axeViolations(page);
    expect(violations.map((v) => v.id).sort()).toEqual(['color-contrast', 'html-has-lang', 'label', 'meta-refresh']);
    await page.goto('http://localhost/good');
    await expectNoAxeViolations(page, 'the good page again');
    await page.close();
  });
});
