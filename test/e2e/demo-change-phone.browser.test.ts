/**
 * The demo's "Change phone number", in Chromium, in English and in French, each page checked by
 * axe-core: a number that cannot be one gets the kit's number form back at once (422, the user's
 * language, the typed value kept, nothing kept or texted); the change starts only after the user
 * confirms it's them on the current number; a national number is read with the country of the page's language (US
 * for English, France for French), texted as E.164 to the demo's inbox, and once its code is
 * entered the user's number changes, exactly once (a reload of the landing changes nothing more).
 * A passkey saved while confirming the old number never answers for the new one.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHANGE_PHONE } from '../../demo-app/domain.ts';
import { DEMO_TEXTS, demoKitMessages, type DemoLocale } from '../../demo-app/i18n.ts';
import { completeMessages } from '../../middleware/pages/messages.ts';
import { expectNoAxeViolations } from '../support/axe.ts';
import { addVirtualAuthenticator, launchBrowser } from '../support/browser.ts';
import {
  arriveAt,
  declinePasskeyOffer,
  enterCode,
  newContext,
  signIn,
  startStack,
  type Stack,
} from '../support/demo-stack.ts';
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

const CASES: Record<DemoLocale, { acceptLanguage: string; user: DemoUserKey; typed: string; e164: string }> = {
  en: { acceptLanguage: 'en-US', user: 'chen', typed: '(202) 555-0123', e164: '+12025550123' },
  fr: { acceptLanguage: 'fr-FR', user: 'bob', typed: '06 12 34 56 78', e164: '+33612345678' },
};

async function check(page: Page, locale: DemoLocale, label: string, text: string): Promise<void> {
  expect(await page.locator('html').getAttribute('lang'), `lang of ${label}`).toBe(locale);
  expect(await page.locator('body').innerText(), `text of ${label}`).toContain(text);
  await expectNoAxeViolations(page, `${label} [${locale}]`);
}

const phoneOf = (userId: string) =>
  stack.demo.db.prepare('SELECT phone, verified_phone FROM demo_users WHERE id = ?').get(userId) as {
    phone: string;
    verified_phone: string | null;
  };
const changes = (userId: string) =>
  (
    stack.demo.db
      .prepare('SELECT COUNT(*) AS n FROM demo_activity WHERE user_id = ? AND action = ?')
      .get(userId, CHANGE_PHONE) as { n: number }
  ).n;

describe.each(['en', 'fr'] as const)('changing the phone number, in %s', (locale) => {
  let context: BrowserContext;
  beforeAll(async () => {
    context = await browser.newContext({
      locale: CASES[locale].acceptLanguage,
      viewport: { width: 1100, height: 760 },
    });
    context.setDefaultTimeout(8000);
  });
  afterAll(async () => {
    await context?.close();
  });

  it(
    'after the user confirms it’s them, a typed national number is texted as E.164 and becomes the user’s number once',
    { timeout: 90_000 },
    async () => {
      const { user, typed, e164 } = CASES[locale];
      const t = DEMO_TEXTS[locale];
      const messages = completeMessages(locale, demoKitMessages[locale]);
      const { id } = DEMO_USERS[user];
      const page = await context.newPage();
      const landings: string[] = [];
      page.on('request', (request) => {
        if (request.url().startsWith(`${stack.demoUrl}/verify/return?`)) landings.push(request.url());
      });
      await page.goto(`${stack.demoUrl}/signin`);
      await page.getByRole('button', { name: t.signin.buttonLabel(DEMO_USERS[user].name) }).click();
      await page.waitForURL(`${stack.demoUrl}/`);
      await check(page, locale, 'home with the change form', t.home.changePhone);

      // Not a number: the kit's form back at once, in the user's language with what was typed;
      // nothing is kept or texted, and the user is not asked to confirm it's them for it.
      const keptAt = (await stack.control.outbox()).length;
      await page.getByLabel(t.home.newPhone).fill('12');
      const refused = page.waitForResponse((response) => response.url().endsWith('/verify/start'));
      await page.getByRole('button', { name: t.home.changePhone }).click();
      expect((await refused).status()).toBe(422);
      await check(page, locale, 'number form back', messages.errors.invalid_phone_number);
      expect(await page.getByLabel(messages.enterNumber.label, { exact: true }).inputValue()).toBe('12');
      expect((await stack.control.outbox()).length).toBe(keptAt);

      // The national number, typed again in the kit's form: the change starts only once the user
      // confirms it's them on the current number; nothing is texted to the new one before.
      await page.getByLabel(messages.enterNumber.label, { exact: true }).fill(typed);
      await page.getByRole('button', { name: messages.enterNumber.send }).click();
      await check(page, locale, 'confirm it’s you first', messages.stepUp.purpose(t.security.changePhoneLabel));
      expect((await stack.control.outbox()).length).toBe(keptAt);
      await page.getByRole('button', { name: messages.stepUp.send }).click();
      await page.waitForURL(stack.verifyUrl);
      await page.locator('#code').waitFor();
      const toCurrent = (await stack.control.outbox()).slice(keptAt);
      expect(toCurrent.map((message) => message.to)).toEqual([DEMO_USERS[user].phone]);
      await enterCode(page, toCurrent[0]!.code);
      await declinePasskeyOffer(page);
      await page.waitForURL(new RegExp(`${stack.demoUrl}/verify/step-up\\?intent=`));
      await check(page, locale, 'confirm the change', messages.stepUp.confirmTitle);
      landings.splice(0);

      // Confirmed, the kept start texts the national number as E.164.
      const sentBefore = (await stack.control.outbox()).length;
      await page.getByRole('button', { name: messages.stepUp.confirm }).click();
      await page.waitForURL(stack.verifyUrl);
      await page.locator('#code').waitFor();
      const texted = (await stack.control.outbox()).slice(sentBefore);
      expect(texted.map((message) => message.to)).toEqual([e164]);
      expect(phoneOf(id).phone).toBe(DEMO_USERS[user].phone); // nothing changes before the code
      await enterCode(page, texted[0]!.code);
      await declinePasskeyOffer(page);
      await page.waitForURL(`${stack.demoUrl}/verified/phone`);
      await check(page, locale, 'number changed', t.verified.phoneTitle);
      expect(phoneOf(id)).toEqual({ phone: e164, verified_phone: e164 });
      expect(changes(id)).toBe(1);

      // The landing opened again (from the history) changes nothing more.
      expect(landings).toHaveLength(1);
      await page.goto(landings[0]!);
      await page.waitForURL(`${stack.demoUrl}/verified/phone`);
      expect(changes(id)).toBe(1);
      // The home page shows the new number as every page but its form does: masked.
      await page.goto(`${stack.demoUrl}/`);
      const home = await page.locator('body').innerText();
      expect(home).toContain(`••\u00a0${e164.slice(-2)}`);
      expect(home).not.toContain(e164);
    },
  );
});

describe("the old number's passkey", () => {
  it('never answers for the number typed: the hosted page texts the new number and offers no passkey', async () => {
    const context = await newContext(browser);
    try {
      const page = await context.newPage();
      await addVirtualAuthenticator(context, page);
      await signIn(page, stack, 'alice');
      // Alice confirms her number by SMS and saves a passkey for it.
      await page.locator('form:has(input[name="action"][value="confirm_phone"]) button[type="submit"]').click();
      await arriveAt(page, stack.verifyUrl);
      await page.locator('#code').waitFor();
      const toOld = (await stack.control.outbox()).filter((m) => m.to === DEMO_USERS.alice.phone);
      await enterCode(page, toOld.at(-1)!.code);
      await page.getByRole('heading', { name: 'Code accepted' }).waitFor();
      await page.getByRole('button', { name: 'Create a passkey' }).click();
      await arriveAt(page, `${stack.demoUrl}/verified/phone`);

      // She types a new number: it gets the code, and her passkey is not offered.
      await page.goto(`${stack.demoUrl}/`);
      await page.getByLabel(DEMO_TEXTS.en.home.newPhone, { exact: true }).fill('+33 6 98 76 54 32');
      await page.getByRole('button', { name: DEMO_TEXTS.en.home.changePhone }).click();
      // She confirms it's her on the current number first, by its code, then confirms the change.
      const sent = (await stack.control.outbox()).length;
      await page.getByRole('button', { name: 'Text me a code' }).click();
      await arriveAt(page, stack.verifyUrl);
      await page.locator('#code').waitFor();
      const toCurrent = (await stack.control.outbox()).slice(sent);
      expect(toCurrent.map((m) => m.to)).toEqual([DEMO_USERS.alice.phone]);
      await enterCode(page, toCurrent[0]!.code);
      await declinePasskeyOffer(page);
      await arriveAt(page, new RegExp(`${stack.demoUrl}/verify/step-up\\?intent=`));
      await page.getByRole('button', { name: 'Confirm' }).click();
      await arriveAt(page, stack.verifyUrl);
      await page.locator('#code, #passkey-button:not([hidden])').first().waitFor();
      const toNew = (await stack.control.outbox()).filter((m) => m.to === '+33698765432');
      expect({
        texts: toNew.length,
        passkeyOffered: await page.getByRole('button', { name: 'Use your passkey' }).count(),
      }).toEqual({
        texts: 1,
        passkeyOffered: 0,
      });
      await enterCode(page, toNew[0]!.code);
      await declinePasskeyOffer(page);
      await arriveAt(page, `${stack.demoUrl}/verified/phone`);
      expect(phoneOf(DEMO_USERS.alice.id)).toEqual({ phone: '+33698765432', verified_phone: '+33698765432' });
    } finally {
      await context.close();
    }
  });
});
