/**
 * The test app and Debian's Chromium, from beforeAll to afterAll, and a tab signed in to the app
 * that records what the browser refused (a Content Security Policy's console messages).
 */
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { startTestApp, type TestApp } from './app.ts';
import { launchBrowser } from './browser.ts';

export interface SignedInTab {
  context: BrowserContext;
  page: Page;
  /** What the browser refused on the page, as its console said it. */
  refused: string[];
}

export function useAppInBrowser(): {
  readonly app: TestApp;
  signedInPage(options?: BrowserContextOptions): Promise<SignedInTab>;
} {
  let app: TestApp | undefined;
  let browser: Browser | undefined;
  beforeAll(async () => {
    app = await startTestApp();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });
  const running = () => {
    if (app === undefined || browser === undefined) {
      throw new Error('The app and browser run from beforeAll to afterAll: use them in a test.');
    }
    return { app, browser };
  };
  return {
    get app() {
      return running().app;
    },
    /** A new context signed in as alice, and a tab in it. */
    async signedInPage(options = {}) {
      const { app, browser } = running();
      const context = await browser.newContext(options);
      const login = await context.request.post(`${app.url}/test/login`, { form: { user: 'alice' } });
      expect(login.status()).toBe(200);
      const page = await context.newPage();
      const refused: string[] = [];
      page.on('console', (message) => {
        if (/Content Security Policy|Refused to/i.test(message.text())) refused.push(message.text());
      });
      return { context, page, refused };
    },
  };
}
