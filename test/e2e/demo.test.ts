/**
 * The demo in real headless Chromium against the bundled emulator: the flows a person goes
 * through, checked through the page, /api/me and the database (exactly one fulfilment each).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSweep } from '../../middleware/sweep.ts';
import { launchBrowser } from '../helpers/browser.ts';
import { apiMe, arriveAt, dbFacts, enterCode, newContext, signIn, startStack, USERS, waitForHostedPage, wrongCode, type Stack } from './stack.ts';

const SCREENSHOTS = join(import.meta.dirname, '../../docs/screenshots');

let stack: Stack;
let browser: Browser;

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  [stack, browser] = await Promise.all([startStack(), launchBrowser()]);
});

afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** Waits (briefly) until the locator is visible; fails the test otherwise. */
async function visible(locator: Locator): Promise<void> {
  await locator.waitFor({ state: 'visible', timeout: 5000 });
}

async function outboxSize(): Promise<number> {
  return (await stack.control.outbox()).length;
}

describe('demo app in a real browser', () => {
  it('confirms a phone number: hosted page, code, landing, exactly one fulfilment', async () => {
    const context = await newContext(browser);
    const page = await context.newPage();
    await page.goto(`${stack.demoUrl}/`);
    await page.waitForURL(`${stack.demoUrl}/signin`);
    await shot(page, 'signin');
    await signIn(page, stack, 'alice');
    await visible(page.getByText('Not verified'));
    await shot(page, 'home');

    const before = await outboxSize();
    await page.getByRole('button', { name: 'Confirm your phone number' }).click();
    const sessionId = await waitForHostedPage(page, stack, 'alice', before);
    await shot(page, 'hosted-code');
    expect(dbFacts(stack, sessionId)).toEqual({ activity: 0, outcome: 'pending', reason: null });

    await enterCode(page, await stack.control.codeFor(sessionId));
    await arriveAt(page, `${stack.demoUrl}/verified/phone`);
    await visible(page.getByRole('heading', { name: 'Phone number confirmed' }));
    await visible(page.getByText(sessionId));
    await shot(page, 'verified');

    const me = await apiMe(context, stack);
    expect(me.user.phoneVerified).toBe(true);
    expect(me.actions.filter((a) => a.sessionId === sessionId)).toEqual([
      expect.objectContaining({ sessionId, action: 'confirm_phone', detail: `Confirmed ${USERS.alice.phone}` }),
    ]);
    expect(dbFacts(stack, sessionId)).toEqual({ activity: 1, outcome: 'fulfilled', reason: null });
    await context.close();
  });
});
