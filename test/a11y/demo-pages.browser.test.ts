/**
 * Every page of the demo (its own and the kit's in the demo's look) in Chromium, in both of its
 * languages, checked by axe-core (WCAG 2.1 A and AA): sign-in, home, activity, the verified pages,
 * the auto-submit page with and without JavaScript, pending, each failure reason, start-again,
 * the neutral page, each error, the rate-limited answer and the operator page; each with `lang`
 * and text of the language Accept-Language asked for. Also the emulator's hosted page (its states) and inbox, and
 * one whole flow finished with the keyboard alone.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_TEXTS, demoKitMessages, type DemoLocale } from '../../demo-app/i18n.ts';
import { englishMessages } from '../../middleware/index.ts';
import { completeMessages } from '../../middleware/pages/messages.ts';
import { DAY_MS } from '../support/clock.ts';
import { expectNoAxeViolations, withoutPageScripts } from '../support/axe.ts';
import { addVirtualAuthenticator, launchBrowser } from '../support/browser.ts';
import { declinePasskeyOffer, startStack, type Stack } from '../support/demo-stack.ts';
import { GENEROUS_START_LIMITS } from '../support/limits.ts';
import { DEMO_USERS, type DemoUserKey } from '../support/users.ts';

let stack: Stack;
let browser: Browser;

beforeAll(async () => {
  // These scenarios start many attempts; the rate-limited page has a stack of its own with the demo's limits.
  [stack, browser] = await Promise.all([startStack({ startLimits: GENEROUS_START_LIMITS }), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

const ACCEPT_LANGUAGE: Record<DemoLocale, string> = { en: 'en-GB', fr: 'fr-FR' };

async function newContext(locale: DemoLocale, options: { javaScriptEnabled?: boolean } = {}): Promise<BrowserContext> {
  const context = await browser.newContext({
    locale: ACCEPT_LANGUAGE[locale],
    javaScriptEnabled: options.javaScriptEnabled ?? true,
  });
  context.setDefaultTimeout(8000);
  return context;
}

/** axe, plus the page's language: `lang` and a text of that language. */
async function check(page: Page, locale: DemoLocale, label: string, text?: string): Promise<void> {
  expect(await page.locator('html').getAttribute('lang'), `lang of ${label}`).toBe(locale);
  if (text !== undefined) expect(await page.locator('body').innerText(), `text of ${label}`).toContain(text);
  await expectNoAxeViolations(page, `${label} [${locale}]`);
}

async function signIn(page: Page, locale: DemoLocale, user: DemoUserKey, on: Stack = stack): Promise<void> {
  await page.goto(`${on.demoUrl}/signin`);
  await page.getByRole('button', { name: DEMO_TEXTS[locale].signin.buttonLabel(DEMO_USERS[user].name) }).click();
  await page.waitForURL(`${on.demoUrl}/`);
}

/** The kit's token of each context's session: one per session, so the home page is read once. */
const kitTokens = new WeakMap<BrowserContext, string>();

/** Starts a confirm_phone attempt over HTTP with the home page's kit token: its sessionId and state. */
async function startAttempt(context: BrowserContext, page: Page): Promise<{ sessionId: string; state: string }> {
  let csrf = kitTokens.get(context);
  if (csrf === undefined) {
    await page.goto(`${stack.demoUrl}/`);
    const field = page.locator('form:has(input[value="confirm_phone"]) input[name="_csrf"]');
    csrf = (await field.getAttribute('value'))!;
    kitTokens.set(context, csrf);
  }
  const started = await context.request.post(`${stack.demoUrl}/verify/start`, {
    form: { _csrf: csrf, action: 'confirm_phone' },
    headers: { origin: stack.demoUrl },
  });
  expect(started.status()).toBe(200);
  const attempts = await stack.demo.store.listAttempts({ limit: Number.MAX_SAFE_INTEGER });
  const newest = attempts.reduce((a, b) => (b.startSeq > a.startSeq ? b : a));
  return { sessionId: newest.sessionId, state: newest.state };
}

/** An hour: past the pending page's checking window. */
const PAST_THE_WINDOW_MS = 3_600_000;

function landingUrl(ids: { sessionId: string; state: string }): string {
  return `${stack.returnUrl}?${new URLSearchParams({ session_id: ids.sessionId, state: ids.state })}`;
}

async function waitForHostedPage(page: Page): Promise<string> {
  await page.waitForURL(stack.verifyUrl);
  await page.locator('#code').waitFor();
  return (await stack.control.outbox()).at(-1)!.sessionId;
}

const USER_FOR: Record<DemoLocale, DemoUserKey> = { en: 'alice', fr: 'bob' };
/** The demo's operator (its default): the operator page is hers alone. */
const OPERATOR: DemoUserKey = 'alice';
/** The operator page's French number (the phone change texts it) and its block, one per language. */
const OPERATOR_NUMBER: Record<DemoLocale, string> = { en: '+33612345678', fr: '+33698765432' };
const OPERATOR_BLOCK: Record<DemoLocale, string> = { en: '+33612345', fr: '+33698765' };

for (const locale of ['en', 'fr'] as const) {
  const t = DEMO_TEXTS[locale];
  const user = USER_FOR[locale];

  describe(`the demo in ${locale}: every page passes axe`, () => {
    it('sign-in, home, activity and verifications (empty and filled), auto-submit, verified page, 404', async () => {
      const context = await newContext(locale);
      const page = await context.newPage();
      await page.goto(`${stack.demoUrl}/signin`);
      await check(page, locale, 'sign-in', t.signin.heading);
      await signIn(page, locale, user);
      await check(page, locale, 'home', t.home.confirm);
      await page.goto(`${stack.demoUrl}/activity`);
      await check(page, locale, 'activity (empty)', t.activity.empty);
      await page.goto(`${stack.demoUrl}/verifications`);
      await check(page, locale, 'verifications (empty)', t.verifications.empty);
      await page.goto(`${stack.demoUrl}/nowhere`);
      await check(page, locale, '404', t.errors.notFound.title);

      // The auto-submit page, its own submit only recorded so it stays on screen for axe.
      await page.addInitScript(() => {
        HTMLFormElement.prototype.submit = function submit(this: HTMLFormElement) {
          (window as unknown as { autoSubmittedTo?: string }).autoSubmittedTo = this.action;
        };
      });
      await page.goto(`${stack.demoUrl}/`);
      await page.locator('form:has(input[value="confirm_phone"]) button').click();
      await page.waitForURL(`${stack.demoUrl}/verify/start`);
      await expect
        .poll(() => page.evaluate(() => (window as unknown as { autoSubmittedTo?: string }).autoSubmittedTo))
        .toBe(stack.verifyUrl);
      const messages = demoKitMessages[locale];
      await check(page, locale, 'auto-submit page (JavaScript on)', messages.handoff?.continue ?? 'Continue');
      await context.close();

      // A real flow to the verified page, then the activity with a row.
      const flow = await newContext(locale);
      const flowPage = await flow.newPage();
      await signIn(flowPage, locale, user);
      await flowPage.locator('form:has(input[value="confirm_phone"]) button').click();
      const sessionId = await waitForHostedPage(flowPage);
      await flowPage.locator('#code').fill(await stack.control.codeFor(sessionId));
      await flowPage.locator('#code').press('Enter');
      await declinePasskeyOffer(flowPage);
      await flowPage.waitForURL(`${stack.demoUrl}/verified/phone`);
      await check(flowPage, locale, 'verified page', t.verified.phoneTitle);
      await flowPage.goto(`${stack.demoUrl}/activity`);
      await check(flowPage, locale, 'activity (one row)', t.actionLabels.confirm_phone);
      await flowPage.goto(`${stack.demoUrl}/verifications`);
      await check(flowPage, locale, 'verifications (rows)', t.verifications.outcomes.fulfilled);
      await flow.close();
    }, 60_000); // eight pages through axe, each a browser round trip

    it('the operator page: texts by country (chart and table), a tripped block, a decision, the form and its error', async () => {
      const context = await newContext(locale);
      const page = await context.newPage();
      await signIn(page, locale, OPERATOR);
      // A text to a French number: the user asks to change their number to it, confirms it's them
      // with the code texted to their own number, then confirms the change, which texts France.
      const messages = completeMessages(locale, demoKitMessages[locale]);
      await page.getByLabel(t.home.newPhone).fill(OPERATOR_NUMBER[locale]);
      await page.getByRole('button', { name: t.home.changePhone }).click();
      await page.getByRole('button', { name: messages.stepUp.send }).click();
      await page.locator('#code').fill(await stack.control.codeFor(await waitForHostedPage(page)));
      await page.locator('#code').press('Enter');
      await declinePasskeyOffer(page);
      await page.waitForURL(new RegExp(`${stack.demoUrl}/verify/step-up\\?intent=`));
      const sent = (await stack.control.outbox()).length;
      await page.getByRole('button', { name: messages.stepUp.confirm }).click();
      await waitForHostedPage(page);
      expect((await stack.control.outbox()).slice(sent).map((m) => m.to)).toEqual([OPERATOR_NUMBER[locale]]);
      // Its block blocked from the page's form: the next start (the user's grant still fresh) is refused.
      const startToFrance = async () => {
        await page.goto(`${stack.demoUrl}/`);
        const csrf = await page
          .locator('form:has(input[value="change_phone"]) input[name="_csrf"]')
          .getAttribute('value');
        const started = await context.request.post(`${stack.demoUrl}/verify/start`, {
          form: { _csrf: csrf!, action: 'change_phone', phone: OPERATOR_NUMBER[locale] },
          headers: { origin: stack.demoUrl },
        });
        return started.status();
      };
      await page.goto(`${stack.demoUrl}/`);
      await page.getByRole('link', { name: t.nav.operator }).click();
      await page.waitForURL(`${stack.demoUrl}/operator/pumping`);
      await page.getByLabel(t.operator.target).fill(OPERATOR_BLOCK[locale]);
      await page.getByRole('button', { name: t.operator.submit }).click();
      await page.waitForURL(`${stack.demoUrl}/operator/pumping?done=block`);
      expect(await startToFrance()).toBe(429);

      await page.goto(`${stack.demoUrl}/operator/pumping?done=block`);
      expect(await page.locator('svg.chart g[data-country="FR"] g[data-days-ago="0"]').count()).toBe(1);
      expect(await page.locator('#tripped-table tbody tr').count()).toBeGreaterThan(0);
      expect(await page.locator('#decisions-table tr[data-decision="refused"]').count()).toBeGreaterThan(0);
      await check(page, locale, 'operator page (a block, a decision)', t.operator.done.block);

      await page.getByLabel(t.operator.target).fill('nowhere');
      const [refused] = await Promise.all([
        page.waitForResponse(`${stack.demoUrl}/operator/pumping`),
        page.getByRole('button', { name: t.operator.submit }).click(),
      ]);
      expect(refused.status()).toBe(400);
      await check(page, locale, 'operator page (form error)', t.operator.invalidTarget);

      await page.getByLabel(t.operator.acts.clear).check();
      await page.getByLabel(t.operator.target).fill(OPERATOR_BLOCK[locale]);
      await page.getByRole('button', { name: t.operator.submit }).click();
      await page.waitForURL(`${stack.demoUrl}/operator/pumping?done=cleared`);
      await check(page, locale, 'operator page (block removed)', t.operator.noRules);
      await context.close();
    }, 60_000);

    it('the auto-submit page without JavaScript', async () => {
      const context = await newContext(locale);
      const page = await context.newPage();
      await signIn(page, locale, user);
      await withoutPageScripts(page);
      const toVerifyPage: string[] = [];
      page.on('request', (request) => {
        if (request.url().startsWith(stack.verifyUrl)) toVerifyPage.push(request.url());
      });
      await page.goto(`${stack.demoUrl}/`);
      await page.locator('form:has(input[value="confirm_phone"]) button').click();
      await page.waitForURL(`${stack.demoUrl}/verify/start`);
      await check(page, locale, 'auto-submit page (JavaScript off)');
      expect(toVerifyPage).toEqual([]);
      await context.close();
    });

    it('pending (checking, stopped), each failure reason, expired, superseded, start-again, neutral', async () => {
      const context = await newContext(locale);
      const page = await context.newPage();
      await signIn(page, locale, user);
      const kit = demoKitMessages[locale];

      const pending = await startAttempt(context, page);
      await page.goto(landingUrl(pending));
      await check(page, locale, 'pending page (checking)');
      await expect.poll(() => page.getByRole('status').textContent()).toBeTruthy();
      expect(await page.locator('meta[http-equiv="refresh"]').count()).toBe(0);
      // An hour later by the demo's clock, the same attempt is past the window.
      await stack.clock.shifted(PAST_THE_WINDOW_MS, () => page.goto(landingUrl(pending)));
      await check(page, locale, 'pending page (stopped)', kit.pending?.stopped?.slice(0, 40));

      for (const reason of ['otp_locked', 'device_changed', 'session_binding_failed', 'a_reason_nobody_knows']) {
        const attempt = await startAttempt(context, page);
        expect((await stack.control.complete(attempt.sessionId, { outcome: 'failed', reason })).status).toBe(200);
        await page.goto(landingUrl(attempt));
        const key = reason === 'a_reason_nobody_knows' ? 'generic' : (reason as 'otp_locked');
        const title = kit.failures?.[key]?.title ?? englishMessages.failures[key].title;
        await check(page, locale, `failure page (${reason})`, title);
      }

      // Never finished: two days later by the demo's clock, the sweep expires it.
      const expired = await startAttempt(context, page);
      await stack.clock.shifted(2 * DAY_MS, () => stack.demo.kit.runSweep());
      expect((await stack.demo.store.findAttemptBySessionId(expired.sessionId))?.outcome).toBe('expired');
      await page.goto(landingUrl(expired));
      await check(page, locale, 'failure page (expired)');

      // confirm_phone keeps the newest verified start ('latest'): landing a newer one supersedes this one.
      const superseded = await startAttempt(context, page);
      const newer = await startAttempt(context, page);
      expect((await stack.control.complete(newer.sessionId, { outcome: 'verified' })).status).toBe(200);
      expect((await context.request.get(landingUrl(newer), { maxRedirects: 0 })).status()).toBe(303);
      expect((await stack.demo.store.findAttemptBySessionId(superseded.sessionId))?.outcome).toBe('superseded');
      await page.goto(landingUrl(superseded));
      await check(page, locale, 'failure page (superseded)', kit.failures?.superseded?.title ?? 'A newer request');

      await page.goto(`${stack.demoUrl}/verify/start-again?action=confirm_phone`);
      await check(page, locale, 'start-again page');

      // Someone else's landing: the neutral page.
      const other = await newContext(locale);
      const otherPage = await other.newPage();
      await signIn(otherPage, locale, 'chen');
      await otherPage.goto(landingUrl(expired));
      await check(otherPage, locale, 'neutral page', t.kit.processedTitle);
      await Promise.all([context.close(), other.close()]);
    });

    it('each error: landing 400s, 403 (a forged start; the operator page to a user who is not an operator), 405, a refused payout number (the demo’s own text)', async () => {
      const context = await newContext(locale);
      const page = await context.newPage();
      await signIn(page, locale, user);
      const attempt = await startAttempt(context, page);
      const cases: Array<[string, number, string]> = [
        ['invalid_return_params', 400, `${stack.returnUrl}?session_id=abc`],
        ['unknown_attempt', 400, landingUrl({ sessionId: 'abc', state: 'C'.repeat(43) })],
        ['session_mismatch', 400, landingUrl({ sessionId: 'not-this-one', state: attempt.state })],
        ['unknown_action', 400, `${stack.demoUrl}/verify/start-again?action=nope`],
        ['method_not_allowed', 405, `${stack.demoUrl}/verify/start`],
      ];
      for (const [code, status, url] of cases) {
        const response = await page.goto(url);
        expect(response?.status(), code).toBe(status);
        await check(page, locale, `error ${status} ${code}`);
      }

      await page.goto(`${stack.demoUrl}/`);
      const token = page.locator('form:has(input[value="confirm_phone"]) input[name="_csrf"]');
      await token.evaluate((input: HTMLInputElement) => (input.value = 'x'));
      const [refused] = await Promise.all([
        page.waitForResponse(`${stack.demoUrl}/verify/start`),
        page.locator('form:has(input[value="confirm_phone"]) button').click(),
      ]);
      expect(refused.status()).toBe(403);
      await check(page, locale, 'error 403 csrf_failed');

      await page.goto(`${stack.demoUrl}/`);
      // Passes the field's own pattern, not prepare's 8 to 17 digits: the demo's text, in the page's language.
      await page.locator('#accountNumber').fill('1234 5678 9012 3456 78');
      const [badNumber] = await Promise.all([
        page.waitForResponse(`${stack.demoUrl}/verify/start`),
        page.locator('form:has(input[value="change_payout"]) button').click(),
      ]);
      expect(badNumber.status()).toBe(400);
      await check(page, locale, 'error 400 invalid_action_params (the demo’s own text)', t.account.digits);
      await context.close();

      const other = await newContext(locale);
      const otherPage = await other.newPage();
      await signIn(otherPage, locale, 'chen');
      const forbidden = await otherPage.goto(`${stack.demoUrl}/operator/pumping`);
      expect(forbidden?.status()).toBe(403);
      await check(otherPage, locale, 'error 403 operators only', t.errors.operatorOnly.title);
      await other.close();
    });
  });
}

describe('rate limited, in both languages', () => {
  it('the 429 page passes axe and says how long to wait, in English and in French', async () => {
    // A stack of its own with the demo's start limits (the suite's stack has generous ones).
    const limited = await startStack();
    try {
      const context = await newContext('en');
      const page = await context.newPage();
      await signIn(page, 'en', 'chen', limited);
      // Chen's destination budget (5 per 10 minutes) runs out, spent over HTTP with the home page's kit
      // token (the pages on the way are checked elsewhere); the next start is refused before any SMS.
      await page.goto(`${limited.demoUrl}/`);
      const form = page.locator('form:has(input[value="confirm_phone"])');
      const csrf = (await form.locator('input[name="_csrf"]').getAttribute('value'))!;
      let status = 200;
      for (let i = 0; i < 10 && status === 200; i++) {
        const answer = await context.request.post(`${limited.demoUrl}/verify/start`, {
          form: { _csrf: csrf, action: 'confirm_phone' },
          headers: { origin: limited.demoUrl },
        });
        status = answer.status();
      }
      expect(status).toBe(429);
      // The page the browser shows for the form's own button.
      const [refused] = await Promise.all([
        page.waitForResponse(`${limited.demoUrl}/verify/start`),
        form.locator('button').click(),
      ]);
      expect(refused.status()).toBe(429);
      await check(page, 'en', 'rate limited', 'Too many verification attempts. Try again in');
      await context.close();

      const french = await newContext('fr');
      const frPage = await french.newPage();
      await signIn(frPage, 'fr', 'chen', limited);
      const [answer] = await Promise.all([
        frPage.waitForResponse(`${limited.demoUrl}/verify/start`),
        frPage.locator('form:has(input[value="confirm_phone"]) button').click(),
      ]);
      expect(answer.status()).toBe(429);
      await check(frPage, 'fr', 'rate limited', 'Trop de tentatives de vérification. Réessayez dans');
      await french.close();
    } finally {
      await limited.close();
    }
  });
});

describe("the emulator's pages pass axe", () => {
  it('the hosted code page (normal, sensitive, wrong code), passkey offer, 400 page, inbox', async () => {
    const context = await newContext('en');
    const page = await context.newPage();
    await signIn(page, 'en', 'alice');
    await page.locator('form:has(input[value="confirm_phone"]) button').click();
    const sessionId = await waitForHostedPage(page);
    await check(page, 'en', 'hosted code page');
    const code = await stack.control.codeFor(sessionId);
    await page.locator('#code').fill(code === '000000' ? '111111' : '000000');
    await page.locator('#code').press('Enter');
    await page.getByRole('alert').waitFor();
    await check(page, 'en', 'hosted code page after a wrong code');
    await page.locator('#code').fill(code);
    await page.locator('#code').press('Enter');
    await page.getByRole('heading', { name: 'Code accepted' }).waitFor();
    await check(page, 'en', 'hosted passkey offer');
    await page.getByRole('button', { name: 'Not now' }).click();
    await page.waitForURL(`${stack.demoUrl}/verified/phone`);

    await page.goto(`${stack.demoUrl}/`);
    await page.locator('#accountNumber').fill('0123 4567 8901');
    await page.locator('form:has(input[value="change_payout"]) button').click();
    await waitForHostedPage(page);
    await check(page, 'en', 'hosted code page (sensitive)', 'sensitive action');

    const refused = await page.goto(`${stack.verifyUrl}?hx=nope`);
    expect(refused?.status()).toBe(400);
    await check(page, 'en', 'hosted 400 page');

    await page.goto(`${stack.emulatorUrl}/_dev/inbox`);
    await check(page, 'en', 'SMS inbox', code);
    await context.close();
  });

  it('the hosted "Use your passkey" page (a stack of its own: the passkey stays with that emulator)', async () => {
    const own = await startStack();
    try {
      const context = await newContext('en');
      const page = await context.newPage();
      await addVirtualAuthenticator(context, page);
      await page.goto(`${own.demoUrl}/signin`);
      await page.getByRole('button', { name: 'Sign in as Alice Moreau' }).click();
      await page.waitForURL(`${own.demoUrl}/`);
      await page.locator('form:has(input[value="confirm_phone"]) button').click();
      await page.waitForURL(own.verifyUrl);
      const first = (await own.control.outbox()).at(-1)!.sessionId;
      await page.locator('#code').fill(await own.control.codeFor(first));
      await page.locator('#code').press('Enter');
      await page.getByRole('button', { name: 'Create a passkey' }).click();
      await page.waitForURL(`${own.demoUrl}/verified/phone`);

      await page.goto(`${own.demoUrl}/`);
      await page.locator('form:has(input[value="confirm_phone"]) button').click();
      await page.waitForURL(own.verifyUrl);
      await page.getByRole('button', { name: 'Use your passkey' }).waitFor();
      await check(page, 'en', 'hosted "Use your passkey" page');
      await context.close();
    } finally {
      await own.close();
    }
  });
});

/** Presses Tab until the focused element matches; fails after 40 presses. */
async function tabTo(page: Page, describe: string, matches: () => boolean): Promise<void> {
  for (let i = 0; i < 40; i++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate(matches)) return;
  }
  throw new Error(`Tab never reached ${describe}`);
}

describe('keyboard only', () => {
  it('signs in, changes the payout account on the hosted page and reads the activity: Tab, typing, Enter', async () => {
    const context = await newContext('en');
    const page = await context.newPage();
    await page.goto(`${stack.demoUrl}/signin`);
    const isChensButton = () => document.activeElement?.getAttribute('aria-label') === 'Sign in as Chen Wei';
    await tabTo(page, 'the sign-in button for Chen', isChensButton);
    await page.keyboard.press('Enter');
    await page.waitForURL(`${stack.demoUrl}/`);

    await tabTo(page, 'the account number field', () => document.activeElement?.id === 'accountNumber');
    await page.keyboard.type('1111 2222 3333');
    await page.keyboard.press('Enter');
    const sessionId = await waitForHostedPage(page);
    // The code field has focus on arrival (autofocus lands once the page has rendered, so poll for it).
    await expect.poll(() => page.evaluate(() => document.activeElement?.id), { timeout: 5000 }).toBe('code');
    await page.keyboard.type(await stack.control.codeFor(sessionId));
    await page.keyboard.press('Enter');
    // The hosted page offers a passkey; "Not now", by keyboard too.
    await page.getByRole('heading', { name: 'Code accepted' }).waitFor();
    await tabTo(page, 'the Not now button', () => document.activeElement?.textContent?.trim() === 'Not now');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${stack.demoUrl}/verified/payout`);
    expect(await page.locator('body').innerText()).toContain('Payouts now go to the account ending 3333.');

    await tabTo(page, 'the View activity link', () => document.activeElement?.textContent === 'View activity');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${stack.demoUrl}/activity`);
    expect(await page.locator(`tr[data-session-id="${sessionId}"]`).count()).toBe(1);
    await context.close();
  });
});
