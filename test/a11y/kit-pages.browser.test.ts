/**
 * Every page the kit renders with its default look, in Chromium, checked by axe-core (WCAG 2.1 A
 * and AA): the auto-submit page with and without JavaScript, pending (checking and stopped), each
 * failure reason, start-again, the neutral page, each error and the rate-limited answer. Also the
 * pending page's behaviour (status region, script re-check, "Check again" without JavaScript) and
 * the locale choice (messages and `lang` from Accept-Language).
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoKitMessages } from '../../demo-app/i18n.ts';
import { demoKitPages } from '../../demo-app/views/kit-pages.ts';
import {
  defaultPages,
  englishMessages,
  errorText,
  KitError,
  KitErrorCode,
  type StartLimits,
} from '../../middleware/index.ts';
import { completeMessages, type ErrorTextKey } from '../../middleware/pages/messages.ts';
import { newNonce } from '../../middleware/routes/state.ts';
import { DAY_MS } from '../support/clock.ts';
import { launchBrowser } from '../support/browser.ts';
import { expectNoAxeViolations, withoutPageScripts } from '../support/axe.ts';
import type { AttemptRecord } from '../../middleware/store/types.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

let app: TestApp;
let browser: Browser;

/** Bob is always over his start budget: the kit's own rate-limited answer (429 with Retry-After). */
const bobIsOverBudget: StartLimits = {
  async consume(_req, who) {
    if (who.userRef === 'user-bob') {
      const options = { retryAfterSeconds: 120 };
      throw new KitError(KitErrorCode.RateLimited, 'Too many verification attempts; try again in 120 s.', options);
    }
  },
};

const FRENCH = {
  startNew: 'Commencer une nouvelle vérification',
  failures: { generic: { title: 'La vérification a échoué', text: 'La vérification n’a pas abouti.' } },
  errors: { rate_limited: 'Trop de tentatives de vérification.' },
  retryAfter: (seconds: number) => `Réessayez dans ${Math.ceil(seconds / 60)} minutes.`,
};

beforeAll(async () => {
  [app, browser] = await Promise.all([
    startTestApp({
      kit: {
        limits: bobIsOverBudget,
        messages: { fr: FRENCH },
        // No reuse of a pending answer: "Check again" right after the hosted page must read the new status.
        landing: {
          pendingRechecks: 0,
          pendingRecheckIntervalMs: 0,
          refreshSeconds: 1,
          refreshWindowMs: 60_000,
          pendingReuseMs: 0,
        },
      },
    }),
    launchBrowser(),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await app?.close();
});

async function signedIn(user: string | null, options: { javaScriptEnabled?: boolean; locale?: string } = {}) {
  const context = await browser.newContext({
    javaScriptEnabled: options.javaScriptEnabled ?? true,
    locale: options.locale ?? 'en-US',
  });
  context.setDefaultTimeout(8000);
  if (user !== null) {
    expect((await context.request.post(`${app.url}/test/login`, { form: { user } })).status()).toBe(200);
  }
  return { context, page: await context.newPage() };
}

/** Starts an attempt for the context's user over HTTP (no browser navigation): its stored row. */
async function startAttempt(context: BrowserContext, action = 'grant_badge'): Promise<AttemptRecord> {
  const { csrf } = (await (await context.request.get(`${app.url}/test/csrf`)).json()) as { csrf: string };
  const started = await context.request.post(`${app.url}/verify/start`, {
    form: { _csrf: csrf, action },
    headers: { origin: app.url },
  });
  expect(started.status()).toBe(200);
  return app.latestAttempt();
}

/** An hour: past the pending page's checking window (refreshWindowMs, one minute here). */
const PAST_THE_WINDOW_MS = 3_600_000;

function landingUrl(attempt: Pick<AttemptRecord, 'sessionId' | 'state'>): string {
  return `${app.returnUrl}?${new URLSearchParams({ session_id: attempt.sessionId, state: attempt.state })}`;
}

async function failedAttempt(context: BrowserContext, reason: string): Promise<AttemptRecord> {
  const attempt = await startAttempt(context);
  expect((await app.emulator.control.complete(attempt.sessionId, { outcome: 'failed', reason })).status).toBe(200);
  return attempt;
}

async function expectLang(page: Page, lang: string): Promise<void> {
  expect(await page.locator('html').getAttribute('lang')).toBe(lang);
}

describe('kit pages pass axe (WCAG 2.1 A/AA) in Chromium', () => {
  it('the auto-submit page, with JavaScript (its submit recorded, not sent) and without', async () => {
    const withJs = await signedIn('alice');
    // The page submits itself at once; for axe to see it, its form.submit() only records the call here.
    await withJs.page.addInitScript(() => {
      HTMLFormElement.prototype.submit = function submit(this: HTMLFormElement) {
        (window as unknown as { autoSubmittedTo?: string }).autoSubmittedTo = this.action;
      };
    });
    await withJs.page.goto(`${app.url}/form`);
    await withJs.page.click('#go');
    await withJs.page.waitForURL(`${app.url}/verify/start`);
    await expect
      .poll(() => withJs.page.evaluate(() => (window as unknown as { autoSubmittedTo?: string }).autoSubmittedTo))
      .toBe(`${app.emulator.url}/verify`);
    await expectLang(withJs.page, 'en');
    await expectNoAxeViolations(withJs.page, 'auto-submit page (JavaScript on)');
    await withJs.context.close();

    const noJs = await signedIn('alice');
    await withoutPageScripts(noJs.page);
    const toVerifyPage: string[] = [];
    noJs.page.on('request', (request) => {
      if (request.url().startsWith(app.emulator.url)) toVerifyPage.push(request.url());
    });
    await noJs.page.goto(`${app.url}/form`);
    await noJs.page.click('#go');
    await noJs.page.waitForURL(`${app.url}/verify/start`);
    await expect.poll(() => noJs.page.getByRole('button', { name: 'Continue' }).isVisible()).toBe(true);
    await expectNoAxeViolations(noJs.page, 'auto-submit page (JavaScript off)');
    expect(toVerifyPage).toEqual([]);
    await noJs.context.close();
  });

  it('the pending page while it checks, and after it stopped checking', async () => {
    const { context, page } = await signedIn('alice');
    const attempt = await startAttempt(context);
    await page.goto(landingUrl(attempt));
    await expect.poll(() => page.getByRole('status').textContent()).toContain('checks again by itself');
    await expectNoAxeViolations(page, 'pending page (checking)');

    // An hour later by the kit's clock, the same attempt is past the window.
    await app.clock.shifted(PAST_THE_WINDOW_MS, async () => {
      await page.getByRole('link', { name: 'Check again' }).click();
      await expect.poll(() => page.getByRole('status').textContent()).toContain('You do not need to wait here');
    });
    await expectNoAxeViolations(page, 'pending page (stopped)');
    await context.close();
  });

  for (const reason of ['otp_locked', 'device_changed', 'session_binding_failed', 'a_reason_nobody_knows']) {
    it(`the failure page for ${reason}`, async () => {
      const { context, page } = await signedIn('alice');
      const attempt = await failedAttempt(context, reason);
      await page.goto(landingUrl(attempt));
      await expect.poll(() => page.getByRole('button', { name: 'Start a new verification' }).isVisible()).toBe(true);
      await expectNoAxeViolations(page, `failure page (${reason})`);
      await context.close();
    });
  }

  it('the failure page for an expired and a superseded attempt, start-again and the neutral page', async () => {
    const { context, page } = await signedIn('alice');
    // Started two days ago by the kit's clock and never finished: the sweep expires it.
    const attempt = await app.clock.shifted(-2 * DAY_MS, () => startAttempt(context));
    await app.kit.runSweep();
    expect((await app.attempt(attempt.sessionId))?.outcome).toBe('expired');
    await page.goto(landingUrl(attempt));
    await expect.poll(() => page.locator('h1').textContent()).toBe('Verification expired');
    await expectNoAxeViolations(page, 'failure page (expired)');

    // `grant` keeps the newest verified start ('latest'): landing a newer one supersedes this one.
    const superseded = await startAttempt(context, 'grant');
    const newer = await startAttempt(context, 'grant');
    expect((await app.emulator.control.complete(newer.sessionId, { outcome: 'verified' })).status).toBe(200);
    expect((await context.request.get(landingUrl(newer), { maxRedirects: 0 })).status()).toBe(303);
    expect((await app.attempt(superseded.sessionId))?.outcome).toBe('superseded');
    await page.goto(landingUrl(superseded));
    await expect.poll(() => page.locator('h1').textContent()).toBe('A newer request replaced this one');
    expect(await page.getByRole('button').count()).toBe(0);
    await expectNoAxeViolations(page, 'failure page (superseded)');

    await page.goto(`${app.url}/verify/start-again?action=grant_badge`);
    await expect.poll(() => page.locator('h1').textContent()).toBe('This verification page was already used');
    await expectNoAxeViolations(page, 'start-again page');

    const bob = await signedIn('bob');
    await bob.page.goto(landingUrl(attempt));
    await expect.poll(() => bob.page.locator('h1').textContent()).toBe('Verification complete');
    await expectNoAxeViolations(bob.page, 'neutral (complete) page');
    await Promise.all([context.close(), bob.context.close()]);
  });

  it('each error page: 400s, 401, 403, 405, 429 and 503', async () => {
    const { context, page } = await signedIn('alice');
    const attempt = await startAttempt(context);
    const cases: Array<[string, number, string]> = [
      ['invalid_return_params', 400, `${app.returnUrl}?session_id=abc`],
      ['unknown_attempt', 400, landingUrl({ sessionId: 'abc', state: 'C'.repeat(43) })],
      ['session_mismatch', 400, landingUrl({ sessionId: 'not-this-one', state: attempt.state })],
      ['unknown_action', 400, `${app.url}/verify/start-again?action=nope`],
      ['method_not_allowed', 405, `${app.url}/verify/start`],
    ];
    for (const [code, status, url] of cases) {
      const response = await page.goto(url);
      expect(response?.status(), code).toBe(status);
      await expectNoAxeViolations(page, `error page ${status} ${code}`);
    }

    // 403: the start form with a tampered CSRF token.
    await page.goto(`${app.url}/form`);
    await page.locator('input[name="_csrf"]').evaluate((input: HTMLInputElement) => (input.value = 'tampered'));
    const [refused] = await Promise.all([page.waitForResponse(`${app.url}/verify/start`), page.click('#go')]);
    expect(refused.status()).toBe(403);
    await expectNoAxeViolations(page, 'error page 403 csrf_failed');

    // 503: the service does not answer the status read.
    await app.emulator.control.setFaults({ statusFailures: 20, statusStatus: 503 });
    try {
      const down = await page.goto(landingUrl(attempt));
      expect(down?.status()).toBe(503);
      await expectNoAxeViolations(page, 'error page 503 service_unavailable');
    } finally {
      await app.emulator.control.setFaults({ statusFailures: 0 });
    }
    await context.close();

    // 401: nobody signed in.
    const stranger = await signedIn(null);
    await stranger.page.goto(`${app.url}/form`);
    const [unsigned] = await Promise.all([
      stranger.page.waitForResponse(`${app.url}/verify/start`),
      stranger.page.click('#go'),
    ]);
    expect(unsigned.status()).toBe(401);
    await expectNoAxeViolations(stranger.page, 'error page 401 not_signed_in');
    await stranger.context.close();

    // 429: over the start budget; the kit's own text with the wait.
    const bob = await signedIn('bob');
    await bob.page.goto(`${app.url}/form`);
    const [limited] = await Promise.all([bob.page.waitForResponse(`${app.url}/verify/start`), bob.page.click('#go')]);
    expect(limited.status()).toBe(429);
    expect(limited.headers()['retry-after']).toBe('120');
    const limitedText = await bob.page.locator('main').innerText();
    expect(limitedText).toContain('Too many verification attempts. Try again in 2 minutes.');
    await expectNoAxeViolations(bob.page, 'error page 429 rate_limited');
    await bob.context.close();
  });
});

describe('every error code’s page passes axe, default look and the demo’s, English and French', () => {
  // [code, status, the text shown when not the code's own]
  const codes: Array<[string, number, ErrorTextKey?]> = [
    ...Object.values(KitErrorCode).map((code): [string, number] => [code, new KitError(code, 'x').status]),
    ['method_not_allowed', 405],
    ['a_code_from_a_future_version', 409],
    // The refusal of the number the app holds: no number field on its page.
    [KitErrorCode.PhoneNumberRefused, 422, 'stored_number_refused'],
    // A kept form sent back under another resource: still open for its own.
    [KitErrorCode.StepUpIntentUnusable, 409, 'step_up_intent_other_resource'],
  ];
  const looks = [
    { name: 'default', renderers: defaultPages, messages: englishMessages, lang: 'en' },
    { name: 'demo', renderers: demoKitPages, messages: completeMessages('en', demoKitMessages.en), lang: 'en' },
    { name: 'demo', renderers: demoKitPages, messages: completeMessages('fr', demoKitMessages.fr), lang: 'fr' },
  ];
  for (const look of looks) {
    it(`${look.name} look, ${look.lang}`, async () => {
      const page = await browser.newPage();
      for (const [code, status, textKey] of codes) {
        const nonce = newNonce();
        const message = errorText(look.messages, textKey ?? code, status);
        const shown = { status, code, message, ...(textKey === undefined ? {} : { text: textKey }) };
        const body = look.renderers.error(shown, nonce, look.messages);
        const url = `http://localhost/error/${textKey ?? code}`;
        await page.route(url, (route) =>
          route.fulfill({
            status,
            contentType: 'text/html',
            headers: { 'content-security-policy': `default-src 'none'; style-src 'nonce-${nonce}'` },
            body,
          }),
        );
        await page.goto(url);
        await expectLang(page, look.lang);
        expect(await page.locator('main').innerText()).toContain(message);
        await expectNoAxeViolations(page, `error page ${status} ${textKey ?? code} (${look.name}, ${look.lang})`);
      }
      await page.close();
    });
  }
});

describe('the typed-number pages pass axe, English and French', () => {
  const languages = [
    { name: 'default', renderers: defaultPages, messages: englishMessages, lang: 'en' },
    { name: 'default', renderers: defaultPages, messages: completeMessages('fr', demoKitMessages.fr), lang: 'fr' },
    { name: 'demo', renderers: demoKitPages, messages: completeMessages('en', demoKitMessages.en), lang: 'en' },
    { name: 'demo', renderers: demoKitPages, messages: completeMessages('fr', demoKitMessages.fr), lang: 'fr' },
  ];
  const form = { startPath: '/verify/start', csrfToken: 'token', actionName: 'add_phone' };
  for (const { name: look, renderers, messages, lang } of languages) {
    it(`the number form back with each refusal, and a failure naming the number masked (${look} look, ${lang})`, async () => {
      const page = await browser.newPage();
      const pages = [
        // A restart's kept number refused: the form back empty, a new start.
        ...(['invalid_phone_number', 'phone_number_refused', 'kept_number_refused'] as const).map((code) => ({
          name: code,
          text: messages.errors[code],
          render: (nonce: string) =>
            renderers.enterNumber(
              { form, entered: code === 'kept_number_refused' ? '' : '06 12 34', message: messages.errors[code] },
              nonce,
              messages,
            ),
        })),
        {
          name: 'failed',
          text: messages.codeGoesTo('••\u00a078'),
          render: (nonce: string) =>
            renderers.failed(
              { reason: 'otp_locked', restart: { ...form, restartState: 'x'.repeat(43), maskedNumber: '••\u00a078' } },
              nonce,
              messages,
            ),
        },
      ];
      for (const { name, text, render } of pages) {
        const nonce = newNonce();
        const url = `http://localhost/number/${name}`;
        await page.route(url, (route) =>
          route.fulfill({
            status: 422,
            contentType: 'text/html',
            headers: { 'content-security-policy': `default-src 'none'; style-src 'nonce-${nonce}'` },
            body: render(nonce),
          }),
        );
        await page.goto(url);
        await expectLang(page, lang);
        expect(await page.locator('main').innerText()).toContain(text);
        await expectNoAxeViolations(page, `typed-number page ${name} (${look} look, ${lang})`);
      }
      // The field is labelled, and says why it was refused.
      await page.goto('http://localhost/number/invalid_phone_number');
      const field = page.getByLabel(messages.enterNumber.label, { exact: true });
      expect(await field.inputValue()).toBe('06 12 34');
      expect(await field.getAttribute('aria-invalid')).toBe('true');
      await page.close();
    });
  }
});

/**
 * Moves the page's clock on by `ms` (its due timers run). A navigation the timers start may replace
 * the document meanwhile: the caller then reads where the page went.
 */
async function moveOn(page: Page, ms: number): Promise<void> {
  await page.clock.runFor(ms).catch(() => undefined);
}

describe('the pending page', () => {
  it('announces its state in a status region and, with JavaScript, shows the result by itself', async () => {
    const { context, page } = await signedIn('alice');
    const attempt = await startAttempt(context);
    const checkHeaders: (string | undefined)[] = [];
    page.on('request', (request) => {
      // A check answered with the landing's 303 is not followed (redirect: 'manual'): Chromium
      // reports the redirect it then aborts as a request of its own, never sent.
      const followed = request.redirectedFrom() !== null;
      const check = request.resourceType() === 'fetch' && request.url().startsWith(app.returnUrl) && !followed;
      if (check) checkHeaders.push(request.headers()['x-verify-kit-check']);
    });
    // The page's timers run on a clock the test moves: its waits pass without being waited out.
    await page.clock.install();
    await page.goto(landingUrl(attempt));
    expect(await page.locator('meta[http-equiv="refresh"]').count()).toBe(0);
    await expect.poll(() => page.getByRole('status').textContent()).toContain('checks again by itself');
    const url = page.url();
    // Two background re-checks (after 1 s, then 1.5 s more): each answered "pending" (the second is
    // only scheduled once the first was handled), and the page (and anything a screen reader is
    // reading) stays in place.
    // Real time only bounds the round trips (expect.poll's own 1 s would not on a loaded machine).
    await expect
      .poll(() => moveOn(page, 500).then(() => checkHeaders.length), { timeout: 10_000 })
      .toBeGreaterThanOrEqual(2);
    expect(page.url()).toBe(url);

    const code = await app.emulator.control.codeFor(attempt.sessionId);
    expect(code).toMatch(/^\d{6}$/);
    expect((await app.emulator.control.complete(attempt.sessionId, { outcome: 'verified' })).status).toBe(200);
    // The next re-check (2.25 s later by the page's clock) finds it verified and shows the result.
    await expect
      .poll(() => moveOn(page, 500).then(() => page.url()), { timeout: 10_000 })
      .toBe(`${app.url}/done/badge`);
    expect(app.grants(attempt.sessionId)).toBe(1);
    // Each background check says so: the landing then reads the status once, without re-checks.
    expect(checkHeaders.length).toBeGreaterThan(0);
    expect(checkHeaders.every((value) => value === 'background')).toBe(true);
    await context.close();
  });

  it('without JavaScript, "Check again" shows the result', async () => {
    const { context, page } = await signedIn('alice', { javaScriptEnabled: false });
    const attempt = await startAttempt(context);
    await page.goto(landingUrl(attempt));
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Press Check again');
    expect((await app.emulator.control.complete(attempt.sessionId, { outcome: 'verified' })).status).toBe(200);
    await page.getByRole('link', { name: 'Check again' }).click();
    await page.waitForURL(`${app.url}/done/badge`);
    expect(app.grants(attempt.sessionId)).toBe(1);
    await context.close();
  });

  it('after the window, it no longer checks by itself', async () => {
    const { context, page } = await signedIn('alice');
    const attempt = await app.clock.shifted(-PAST_THE_WINDOW_MS, () => startAttempt(context));
    const checks: string[] = [];
    page.on('request', (request) => {
      if (request.url().startsWith(app.returnUrl)) checks.push(request.url());
    });
    // Counts the checks the page's script starts (each is a fetch).
    await page.addInitScript(() => {
      const counted = window as unknown as { checksStarted: number };
      counted.checksStarted = 0;
      const fetch = window.fetch.bind(window);
      window.fetch = (...args: Parameters<typeof window.fetch>) => {
        counted.checksStarted += 1;
        return fetch(...args);
      };
    });
    await page.clock.install();
    await page.goto(landingUrl(attempt));
    expect(await page.locator('meta[http-equiv="refresh"]').count()).toBe(0);
    // A minute by the page's clock (a check would have been due after 1 s): no timer of the page
    // starts one, and no request but the landing itself was sent.
    await page.clock.runFor(60_000);
    expect(await page.evaluate(() => (window as unknown as { checksStarted: number }).checksStarted)).toBe(0);
    expect(checks).toHaveLength(1);
    await context.close();
  });
});

describe('locale', () => {
  it('Accept-Language picks messages and lang; unknown reasons: generic text; missing texts: English', async () => {
    const { context, page } = await signedIn('alice', { locale: 'fr-FR' });
    const attempt = await failedAttempt(context, 'a_reason_nobody_knows');
    await page.goto(landingUrl(attempt));
    await expectLang(page, 'fr');
    expect(await page.locator('h1').textContent()).toBe('La vérification a échoué');
    expect(await page.getByRole('button').textContent()).toBe('Commencer une nouvelle vérification');
    // Not in the French set: the English default.
    expect(await page.locator('main').innerText()).toContain('Nothing was changed.');
    await expectNoAxeViolations(page, 'failure page (fr)');

    const bob = await signedIn('bob', { locale: 'fr-CA' });
    await bob.page.goto(`${app.url}/form`);
    const [limited] = await Promise.all([bob.page.waitForResponse(`${app.url}/verify/start`), bob.page.click('#go')]);
    expect(limited.status()).toBe(429);
    await expectLang(bob.page, 'fr');
    const frenchText = await bob.page.locator('main').innerText();
    expect(frenchText).toContain('Trop de tentatives de vérification. Réessayez dans 2 minutes.');

    const english = await signedIn('alice', { locale: 'de-DE' });
    await english.page.goto(landingUrl(attempt));
    await expectLang(english.page, 'en');
    expect(await english.page.locator('h1').textContent()).toBe('Verification failed');
    await Promise.all([context.close(), bob.context.close(), english.context.close()]);
  });
});
