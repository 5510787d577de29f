/**
 * A passkey proves the user's factor, not possession of a number. The demo's `confirm_phone`
 * proves the destination, so a passkey Alice saved while confirming one number must never confirm
 * another. Real headless Chromium with a CDP virtual authenticator; the demo on `localhost`, the
 * hosted page on `verify.localhost` (where WebAuthn works).
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addVirtualAuthenticator, launchBrowser } from '../support/browser.ts';
import { postForm } from '../support/emulator.ts';
import {
  apiMe,
  arriveAt,
  dbFacts,
  enterCode,
  newContext,
  signIn,
  startStack,
  type Stack,
} from '../support/demo-stack.ts';
import { DEMO_USERS } from '../support/users.ts';

const OLD_NUMBER = DEMO_USERS.alice.phone; // +15550100001
const NEW_NUMBER = '+15550107777';

let stack: Stack;
let browser: Browser;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  [stack, browser] = await Promise.all([startStack(), launchBrowser()]);
  context = await newContext(browser);
  page = await context.newPage();
  await addVirtualAuthenticator(context, page);
});

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await stack?.close();
});

async function startConfirmPhone(): Promise<void> {
  await page.goto(`${stack.demoUrl}/`);
  await page.locator('form:has(input[name="action"][value="confirm_phone"]) button[type="submit"]').click();
  await arriveAt(page, stack.verifyUrl);
}

const textsTo = async (number: string) => (await stack.control.outbox()).filter((m) => m.to === number);

async function passkeys(): Promise<Array<{ userRef: string; uses: number }>> {
  const response = await fetch(`${stack.emulatorUrl}/_control/passkeys`);
  return ((await response.json()) as { passkeys: Array<{ userRef: string; uses: number }> }).passkeys;
}

/** Node cannot resolve *.localhost: the hosted page's own address on the emulator's loopback listener. */

describe('confirm_phone proves the destination: a passkey saved for one number never confirms another', () => {
  it('Alice confirms ...0001 by SMS and saves a passkey', async () => {
    await signIn(page, stack, 'alice');
    await startConfirmPhone();
    await page.locator('#code').waitFor();
    const [sms] = await textsTo(OLD_NUMBER);
    await enterCode(page, sms!.code);
    await page.getByRole('heading', { name: 'Code accepted' }).waitFor();
    await page.getByRole('button', { name: 'Create a passkey' }).click();
    await arriveAt(page, `${stack.demoUrl}/verified/phone`);
    expect(await dbFacts(stack, sms!.sessionId)).toEqual({ activity: 1, outcome: 'fulfilled', reason: null });
    expect(await passkeys()).toHaveLength(1);
  });

  it('her number changes to ...7777: the hosted page texts ...7777 and does not take the old passkey', async () => {
    stack.demo.db.prepare('UPDATE demo_users SET phone = ? WHERE id = ?').run(NEW_NUMBER, DEMO_USERS.alice.id);
    await startConfirmPhone();
    // Whatever the page shows first: the code form, or the passkey prompt of the number she had.
    await page.locator('#code, #passkey-button:not([hidden])').first().waitFor();
    const offered = await page.getByRole('button', { name: 'Use your passkey' }).count();
    expect({ textsToNewNumber: (await textsTo(NEW_NUMBER)).length, passkeyOffered: offered }).toEqual({
      textsToNewNumber: 1,
      passkeyOffered: 0,
    });

    // Her passkey answer posted anyway (her device cookie and the page's binding) is refused.
    const [sms] = await textsTo(NEW_NUMBER);
    const device = (await context.cookies()).find((cookie) => cookie.name === `emu_device_${sms!.sessionId}`);
    const binding = await page.locator('input[name="page_binding"]').first().inputValue();
    const forced = await postForm(
      `${stack.verifyUrl}/passkey`,
      { page_binding: binding, credential: '{}' },
      `${device?.name}=${device?.value}`,
    );
    expect(forced.status).toBe(400);
    expect((await stack.control.stats()).smsSent).toBe(2);
    expect((await passkeys())[0]?.uses).toBe(0);

    const me = await apiMe(context, stack);
    expect(me.user.phoneVerified).toBe(false);
    expect(await dbFacts(stack, sms!.sessionId)).toEqual({ activity: 0, outcome: 'pending', reason: null });
  });

  it('...7777 is verified once its own SMS code is entered (and she saves a passkey for it)', async () => {
    const [sms] = await textsTo(NEW_NUMBER);
    await enterCode(page, sms!.code);
    await page.getByRole('heading', { name: 'Code accepted' }).waitFor();
    await page.getByRole('button', { name: 'Create a passkey' }).click();
    await arriveAt(page, `${stack.demoUrl}/verified/phone`);
    expect(await dbFacts(stack, sms!.sessionId)).toEqual({ activity: 1, outcome: 'fulfilled', reason: null });
    const me = await apiMe(context, stack);
    expect(me.user.phoneVerified).toBe(true);
    expect(me.actions.filter((a) => a.sessionId === sms!.sessionId)).toEqual([
      expect.objectContaining({ detail: 'Confirmed ••\u00a077' }),
    ]);
  });

  it('a passkey saved for ...7777 confirms ...7777 again: no SMS, one fulfilment', async () => {
    const sent = (await stack.control.stats()).smsSent;
    await startConfirmPhone();
    await page.getByRole('button', { name: 'Use your passkey' }).click();
    await arriveAt(page, `${stack.demoUrl}/verified/phone`);
    expect((await stack.control.stats()).smsSent).toBe(sent);
    const used = await passkeys();
    expect(used.map((passkey) => passkey.uses)).toEqual([0, 1]); // the ...0001 one never, the ...7777 one once
    const me = await apiMe(context, stack);
    const latest = me.actions.filter((a) => a.action === 'confirm_phone')[0]!;
    expect(latest.detail).toBe('Confirmed ••\u00a077');
    expect(await dbFacts(stack, latest.sessionId)).toEqual({ activity: 1, outcome: 'fulfilled', reason: null });
  });
});
