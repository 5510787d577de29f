/**
 * One demo + one emulator per suite, both on loopback and on different sites (the demo on
 * `localhost`; the emulator's API on `127.0.0.1` and its hosted page on `verify.localhost`, where
 * passkeys work), the way `npm run demo` runs them. The demo's server listens first on port 0 so
 * the emulator's registered returnUrl can name its real port.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createDemoApp, type DemoApp, type DemoAppOptions } from '../../demo-app/app.ts';
import { createTestClock, type TestClock } from './clock.ts';
import { startTestEmulator, type ControlApi } from './emulator.ts';
import { closeServer, listen } from './listen.ts';
import { DEMO_USERS, type DemoUserKey } from './users.ts';

export interface Stack {
  demoUrl: string;
  returnUrl: string;
  /** The emulator's API base (the kit's baseUrl). */
  emulatorUrl: string;
  /** The hosted page, as browsers see it: http://verify.localhost:<port>/verify. */
  verifyUrl: string;
  control: ControlApi;
  demo: DemoApp;
  /** The demo's clock (its kit's and sessions' `now`): start or land in the past or future without SQL. */
  clock: TestClock;
  clientId: string;
  clientSecret: string;
  databasePath: string;
  emulatorLog: string[];
  close(): Promise<void>;
}

/**
 * `startLimits`: the demo's start-limit budgets (its own when omitted; GENEROUS_START_LIMITS where
 * not the subject). `databaseUrl`: the demo on that PostgreSQL database instead of its SQLite file.
 */
export async function startStack(
  options: { startLimits?: DemoAppOptions['startLimits']; databaseUrl?: string } = {},
): Promise<Stack> {
  const dir = mkdtempSync(join(tmpdir(), 'demo-e2e-'));
  const server = createServer();
  const port = await listen(server, { host: 'localhost' });
  const demoUrl = `http://localhost:${port}`;
  const returnUrl = `${demoUrl}/verify/return`;
  const clientId = 'demo-client';
  const clientSecret = `e2e-${randomBytes(12).toString('hex')}`;
  const emulator = await startTestEmulator({
    pageHost: 'verify.localhost',
    clients: [{ clientId, secret: clientSecret, returnUrl, platform: 'web' }],
  });
  const databasePath = join(dir, 'demo.sqlite');
  const clock = createTestClock();
  const demo = createDemoApp({
    now: clock.now,
    verifyBaseUrl: emulator.url,
    clientId,
    clientSecret,
    returnUrl,
    databasePath,
    sessionSecret: 'e2e-session-secret-0123456789abcdef',
    trustProxy: false,
    ...(options.startLimits === undefined ? {} : { startLimits: options.startLimits }),
    ...(options.databaseUrl === undefined ? {} : { databaseUrl: options.databaseUrl }),
  });
  server.on('request', demo.app);
  return {
    demoUrl,
    returnUrl,
    emulatorUrl: emulator.url,
    verifyUrl: `${emulator.pageOrigin}/verify`,
    control: emulator.control,
    demo,
    clock,
    clientId,
    clientSecret,
    databasePath,
    emulatorLog: emulator.logLines,
    async close() {
      await closeServer(server);
      await demo.close();
      await emulator.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Everything the browsers of a suite sent or received outside bodies (URLs, every request and
 * response header, Referers included) and every handoff they posted, for the leak check.
 */
export const browserTraffic = { lines: [] as string[], handoffs: new Set<string>() };

function recordTraffic(context: BrowserContext): void {
  context.on('request', (request) => {
    browserTraffic.lines.push(`${request.method()} ${request.url()} ${JSON.stringify(request.headers())}`);
    const hx = new URLSearchParams(request.postData() ?? '').get('hx');
    if (request.method() === 'POST' && hx) browserTraffic.handoffs.add(hx);
  });
  context.on('response', (response) => {
    browserTraffic.lines.push(`${response.status()} ${response.url()} ${JSON.stringify(response.headers())}`);
  });
}

export async function newContext(
  browser: Browser,
  options: { javaScriptEnabled?: boolean } = {},
): Promise<BrowserContext> {
  const context = await browser.newContext({
    viewport: { width: 1100, height: 760 },
    javaScriptEnabled: options.javaScriptEnabled ?? true,
  });
  recordTraffic(context);
  // Fail fast with the step that hung rather than at the test's own timeout.
  context.setDefaultTimeout(8000);
  return context;
}

export async function signIn(page: Page, stack: Stack, user: DemoUserKey): Promise<void> {
  await page.goto(`${stack.demoUrl}/signin`);
  await page.getByRole('button', { name: `Sign in as ${DEMO_USERS[user].name}` }).click();
  await page.waitForURL(`${stack.demoUrl}/`);
}

/** The hosted code page of the attempt just started; returns its sessionId (from the SMS outbox). */
export async function waitForHostedPage(
  page: Page,
  stack: Stack,
  user: DemoUserKey,
  sentBefore: number,
): Promise<string> {
  await page.waitForURL(stack.verifyUrl);
  await page.locator('#code').waitFor();
  const messages = (await stack.control.outbox()).slice(sentBefore).filter((m) => m.to === DEMO_USERS[user].phone);
  if (messages.length !== 1) throw new Error(`expected one new SMS to ${user}, found ${messages.length}`);
  return messages[0]!.sessionId;
}

export async function enterCode(page: Page, code: string): Promise<void> {
  await page.locator('#code').fill(code);
  await page.getByRole('button', { name: 'Verify' }).click();
}

/** After an accepted code the hosted page offers a passkey (the session is already verified): decline it. */
export async function declinePasskeyOffer(page: Page): Promise<void> {
  await page.getByRole('heading', { name: 'Code accepted' }).waitFor();
  await page.getByRole('button', { name: 'Not now' }).click();
}

export function wrongCode(code: string): string {
  return code === '000000' ? '111111' : '000000';
}

export interface Me {
  user: { id: string; phoneVerified: boolean; payoutAccount: { masked: string } | null };
  actions: Array<{ sessionId: string; action: string; detail: string }>;
}

export async function apiMe(context: BrowserContext, stack: Stack): Promise<Me> {
  const response = await context.request.get(`${stack.demoUrl}/api/me`);
  if (response.status() !== 200) throw new Error(`/api/me answered ${response.status()}`);
  return (await response.json()) as Me;
}

/** What proves the effect: the demo's activity rows and the attempt's outcome, read through the kit's store. */
export async function dbFacts(stack: Stack, sessionId: string) {
  const activity = (
    stack.demo.db.prepare('SELECT COUNT(*) AS n FROM demo_activity WHERE session_id = ?').get(sessionId) as {
      n: number;
    }
  ).n;
  const attempt = await stack.demo.store.findAttemptBySessionId(sessionId);
  return { activity, outcome: attempt?.outcome, reason: attempt?.failureReason ?? null };
}

/** Waits for the page to be at `url`; on timeout the error says where the page is and what it shows. */
export async function arriveAt(page: Page, url: string | RegExp): Promise<void> {
  try {
    await page.waitForURL(url);
  } catch (error) {
    const text = await page
      .locator('body')
      .innerText()
      .catch(() => '(no body)');
    throw new Error(`expected ${url}, but the page is at ${page.url()} showing:\n${text.slice(0, 600)}`, {
      cause: error,
    });
  }
}
