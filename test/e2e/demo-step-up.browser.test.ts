/**
 * The demo's Security page and its form behind the kit's step-up guard, in Chromium, in English and
 * in French, each page checked by axe-core: "Confirm it's you" sends no text until its button is
 * pressed; after the hosted page the user is back on the Security page; replacing the recovery
 * codes (the demo's own route) asks again for its own scope, shows what is about to happen, and
 * runs once: a second confirmation of the same request changes nothing.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_TEXTS, demoKitMessages, type DemoLocale } from '../../demo-app/i18n.ts';
import { NEW_RECOVERY_CODES } from '../../demo-app/domain.ts';
import { completeMessages } from '../../middleware/pages/messages.ts';
import { expectNoAxeViolations } from '../support/axe.ts';
import { launchBrowser } from '../support/browser.ts';
import { declinePasskeyOffer, enterCode, startStack, type Stack } from '../support/demo-stack.ts';
import { GENEROUS_START_LIMITS } from '../support/limits.ts';
import { DEMO_USERS, type DemoUserKey } from '../support/users.ts';

let stack: Stack;
let browser: Browser;

beforeAll(async () => {
  [stack, browser] = await Promise.all([startStack({ startLimits: GENEROUS_START_LIMITS }), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

const ACCEPT_LANGUAGE: Record<DemoLocale, string> = { en: 'en-GB', fr: 'fr-FR' };
const USER: Record<DemoLocale, DemoUserKey> = { en: 'alice', fr: 'bob' };

async function check(page: Page, locale: DemoLocale, label: string, text: string): Promise<void> {
  expect(await page.locator('html').getAttribute('lang'), `lang of ${label}`).toBe(locale);
  expect(await page.locator('body').innerText(), `text of ${label}`).toContain(text);
  await expectNoAxeViolations(page, `${label} [${locale}]`);
}

/** Presses "Text me a code", enters the texted code on the hosted page, declines the passkey offer. */
async function confirmItsMe(page: Page, locale: DemoLocale, user: DemoUserKey): Promise<void> {
  const sent = (await stack.control.outbox()).length;
  await page.getByRole('button', { name: completeMessages(locale, demoKitMessages[locale]).stepUp.send }).click();
  await page.waitForURL(stack.verifyUrl);
  await page.locator('#code').waitFor();
  const texts = (await stack.control.outbox()).slice(sent).filter((m) => m.to === DEMO_USERS[user].phone);
  expect(texts).toHaveLength(1);
  await enterCode(page, texts[0]!.code);
  await declinePasskeyOffer(page);
}

const replacements = (userId: string) =>
  (
    stack.demo.db
      .prepare('SELECT COUNT(*) AS n FROM demo_activity WHERE user_id = ? AND action = ?')
      .get(userId, NEW_RECOVERY_CODES) as { n: number }
  ).n;

describe.each(['en', 'fr'] as const)('the Security page behind step-up, in %s', (locale) => {
  let context: BrowserContext;
  beforeAll(async () => {
    context = await browser.newContext({ locale: ACCEPT_LANGUAGE[locale], viewport: { width: 1100, height: 760 } });
    context.setDefaultTimeout(8000);
  });
  afterAll(async () => {
    await context?.close();
  });

  it(
    'asks to confirm it’s you (no text sent), then shows the page; replacing the codes asks again and runs once',
    { timeout: 90_000 },
    async () => {
      const t = DEMO_TEXTS[locale];
      const messages = completeMessages(locale, demoKitMessages[locale]);
      const kit = messages.stepUp;
      const user = USER[locale];
      const page = await context.newPage();
      await page.goto(`${stack.demoUrl}/signin`);
      await page.getByRole('button', { name: t.signin.buttonLabel(DEMO_USERS[user].name) }).click();
      await page.waitForURL(`${stack.demoUrl}/`);

      const textsBefore = (await stack.control.outbox()).length;
      await page.getByRole('link', { name: t.nav.security }).click();
      await check(page, locale, 'confirm it’s you (security)', kit.title);
      expect(await page.locator('body').innerText()).toContain(kit.purpose(t.security.seeLabel));
      expect((await stack.control.outbox()).length).toBe(textsBefore); // a GET never texts

      await confirmItsMe(page, locale, user);
      await page.waitForURL(`${stack.demoUrl}/security`);
      await check(page, locale, 'security page', t.security.codes);
      const codesBefore = await page.locator('#recovery-codes').innerText();

      await page.getByRole('button', { name: t.security.replace }).click();
      await check(page, locale, 'confirm it’s you (replace codes)', kit.purpose(t.security.replaceLabel));
      await confirmItsMe(page, locale, user);
      await page.waitForURL(new RegExp(`${stack.demoUrl}/verify/step-up\\?intent=`));
      await check(page, locale, 'confirm the request', kit.confirmText(t.security.replaceLabel));
      const confirmUrl = page.url();
      expect(replacements(DEMO_USERS[user].id)).toBe(0); // verifying alone changed nothing

      await page.getByRole('button', { name: kit.confirm }).click();
      await page.waitForURL(`${stack.demoUrl}/security?replaced=1`);
      await check(page, locale, 'codes replaced', t.security.replaced);
      expect(await page.locator('#recovery-codes').innerText()).not.toBe(codesBefore);
      expect(replacements(DEMO_USERS[user].id)).toBe(1);

      // The same request confirmed again (the confirmation page reopened) runs nothing.
      await page.goto(confirmUrl);
      await check(page, locale, 'request already used', messages.errors.step_up_intent_unusable);
      expect(replacements(DEMO_USERS[user].id)).toBe(1);
    },
  );
});
