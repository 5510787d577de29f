/**
 * In real headless Chromium (Debian's, never downloaded): the kit's auto-submit page, the hosted
 * page and the demo's start forms refuse to be framed, and a full verification in the browser
 * leaks neither the secret nor the handoff through any URL, Referer or other header the browser sent
 * (every request and response of the browser is recorded and searched).
 */
import { createServer, type Server } from 'node:http';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { launchBrowser } from '../support/browser.ts';
import type { Exchange } from '../support/agent.ts';
import { captureConsole, leaks, startSecStack, type SecStack } from '../support/security-stack.ts';
import { GENEROUS_START_LIMITS } from '../support/limits.ts';
import { closeServer, listen } from '../support/listen.ts';

let stack: SecStack;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let restore: () => void;
/** A framing site on its own loopback origin: serves whatever HTML `framerPage` holds. */
let framer: Server;
let framerUrl: string;
let framerPage = '';

beforeAll(async () => {
  stack = await startSecStack({ startLimits: GENEROUS_START_LIMITS });
  restore = captureConsole(stack.recorder.logs);
  browser = await launchBrowser();
  framer = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(framerPage));
  framerUrl = `http://127.0.0.1:${await listen(framer)}/frame`;
});
afterAll(async () => {
  await browser?.close();
  if (framer !== undefined) await closeServer(framer);
  restore?.();
  await stack?.close();
});
beforeEach(async () => {
  context = await browser.newContext();
  context.setDefaultTimeout(8000);
  // Record every exchange of the browser (URL, all request headers incl. Referer, post data, response headers).
  context.on('requestfinished', (request) => {
    void (async () => {
      const response = await request.response();
      const exchange: Exchange = {
        who: 'browser',
        method: request.method(),
        url: request.url(),
        requestHeaders: await request.allHeaders(),
        requestBody: request.postData() ?? '',
        status: response?.status() ?? 0,
        responseHeaders: response === null ? {} : await response.allHeaders(),
        responseBody: '',
      };
      stack.recorder.exchanges.push(exchange);
    })();
  });
  page = await context.newPage();
});
afterEach(async () => {
  await context?.close();
});

async function signIn(name: string): Promise<void> {
  await page.goto(`${stack.demoUrl}/signin`);
  await page.getByRole('button', { name: `Sign in as ${name}` }).click();
  await page.waitForURL(`${stack.demoUrl}/`);
}

function browserRequests(): Exchange[] {
  return stack.recorder.exchanges.filter((x) => x.who === 'browser');
}

describe('framing in Chromium', () => {
  it("the kit's auto-submit page, loaded in a frame, is not rendered: its script never posts the handoff", async () => {
    await signIn('Alice Moreau');
    const home = await context.request.get(`${stack.demoUrl}/`);
    const token =
      /<form method="post" action="\/verify\/start">\s*<input type="hidden" name="_csrf" value="([^"]+)">/.exec(
        await home.text(),
      )![1]!;
    // A same-origin page (so CSRF passes and only the framing defence is tested) that starts the
    // verification inside an iframe.
    await page.route(`${stack.demoUrl}/__framer`, (route) =>
      route.fulfill({
        contentType: 'text/html',
        body: `<!doctype html><iframe name="f" title="framed" width="500" height="400"></iframe>
<form target="f" method="post" action="/verify/start"><input type="hidden" name="_csrf" value="${token}">
<input type="hidden" name="action" value="confirm_phone"><button id="go">go</button></form>`,
      }),
    );
    await page.goto(`${stack.demoUrl}/__framer`);
    const verifyPosts = (await stack.control.stats()).verifyPosts;
    const answered = page.waitForResponse(
      (r) => r.url() === `${stack.demoUrl}/verify/start` && r.request().method() === 'POST',
    );
    await page.click('#go');
    const response = await answered;
    expect(response.status()).toBe(200); // the kit answered the auto-submit page ...
    expect(response.headers()['x-frame-options']).toBe('DENY');
    await page.waitForTimeout(1000); // ... but the browser must not run it in the frame
    const frame = page.frame({ name: 'f' });
    expect(
      await frame
        ?.locator('#verify-kit-handoff')
        .count()
        .catch(() => 0),
    ).toBe(0);
    expect(browserRequests().filter((x) => x.url.startsWith(`${stack.emulatorUrl}/verify`))).toEqual([]);
    expect((await stack.control.stats()).verifyPosts).toBe(verifyPosts);
  });

  it('the hosted page, posted into a frame on another origin, is not rendered', async () => {
    const agent = await stack.agent().signIn('bob');
    const started = await agent.start('confirm_phone');
    framerPage = `<!doctype html><iframe name="h" title="hosted" width="500" height="400"></iframe>
<form target="h" method="post" action="${started.verifyUrl}"><input type="hidden" name="hx" value="${started.handoff}"><button id="go">go</button></form>`;
    await page.goto(framerUrl);
    const answered = page.waitForResponse((r) => r.url() === started.verifyUrl && r.request().method() === 'POST');
    await page.click('#go');
    const response = await answered;
    expect(response.headers()['x-frame-options']).toBe('DENY');
    await page.waitForTimeout(500);
    const frame = page.frame({ name: 'h' });
    expect(
      await frame
        ?.locator('#code')
        .count()
        .catch(() => 0),
    ).toBe(0);
    expect(await page.frameLocator('iframe[name="h"]').getByLabel(/code/i).count()).toBe(0);
  });

  it("the demo's page with the start buttons cannot be framed by another site (clickjacking)", async () => {
    await signIn('Chen Wei');
    framerPage = `<!doctype html><iframe name="d" src="${stack.demoUrl}/" width="800" height="600"></iframe>`;
    const answered = page.waitForResponse((r) => r.url() === `${stack.demoUrl}/`);
    await page.goto(framerUrl);
    expect((await answered).headers()['x-frame-options']).toBe('DENY');
    await page.waitForTimeout(500);
    expect(
      await page
        .frameLocator('iframe[name="d"]')
        .getByRole('button', { name: /confirm your phone/i })
        .count(),
    ).toBe(0);
  });
});

describe('a full verification in Chromium', () => {
  it('leaks neither the secret nor the handoff in any URL, Referer or header the browser sent or received', async () => {
    await signIn('Alice Moreau');
    const sent = (await stack.control.outbox()).length;
    await page.getByRole('button', { name: /confirm your phone number/i }).click();
    await page.waitForURL(`${stack.emulatorUrl}/verify`);
    await page.locator('#code').waitFor();
    const messages = (await stack.control.outbox()).slice(sent);
    expect(messages).toHaveLength(1);
    await page.locator('#code').fill(messages[0]!.code);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL(`${stack.demoUrl}/verified/phone`);
    await page.waitForTimeout(300); // let the last requestfinished events be recorded

    const seen = browserRequests();
    const landing = seen.find((x) => x.url.startsWith(`${stack.returnUrl}?`));
    expect(landing).toBeDefined();
    const redeem = seen.find((x) => x.method === 'POST' && x.url === `${stack.emulatorUrl}/verify`);
    expect(redeem?.requestBody).toMatch(/^hx=/); // the handoff travelled in the POST body only
    // The return URL's query (session_id, state) never reaches another request's Referer.
    const query = new URL(landing!.url).search.slice(1);
    for (const x of seen) {
      if (x === landing) continue;
      expect(x.requestHeaders.referer ?? '', x.url).not.toContain(query);
    }
    // No request to the service carries the demo's pages as Referer (referrer policies).
    for (const x of seen.filter((y) => y.url.startsWith(stack.emulatorUrl))) {
      expect(x.requestHeaders.referer ?? '', x.url).not.toContain('/verify/start');
    }
    expect(leaks(stack)).toEqual([]);
  });
});
