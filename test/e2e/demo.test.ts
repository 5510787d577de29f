/**
 * The demo in real headless Chromium against the bundled emulator: the flows a person goes
 * through, checked through the page, /api/me and the database (exactly one fulfilment each).
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// The demo's kit comes from the built package: its internals from the same build.
import { contextOf } from '../../dist/middleware/create-kit.js';
import { runSweep } from '../../dist/middleware/sweep/sweep.js';
import { addVirtualAuthenticator, launchBrowser } from '../support/browser.ts';
import {
  apiMe,
  arriveAt,
  browserTraffic,
  dbFacts,
  declinePasskeyOffer,
  enterCode,
  newContext,
  signIn,
  startStack,
  waitForHostedPage,
  wrongCode,
  type Stack,
} from '../support/demo-stack.ts';
import { DEMO_USERS } from '../support/users.ts';

// Every run saves screenshots of the main pages to test-results/screenshots (ignored by git);
// `npm run screenshots` runs this suite with SCREENSHOTS_DIR=docs/screenshots to refresh the README's.
const SCREENSHOTS = process.env.SCREENSHOTS_DIR ?? join(import.meta.dirname, '../../test-results/screenshots');

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

/** Presses the start button of an action's form on the home page. */
async function startAction(page: Page, action: 'confirm_phone' | 'change_payout'): Promise<void> {
  await page.locator(`form:has(input[name="action"][value="${action}"]) button[type="submit"]`).click();
}

/**
 * One step back through the history: the method and address loaded, or that the browser refused to
 * send a POST again (net::ERR_CACHE_MISS). Any other failure fails the test.
 */
async function backThroughHistory(page: Page): Promise<string> {
  try {
    const response = await page.goBack({ waitUntil: 'load' });
    return response === null ? 'no history' : `${response.request().method()} ${page.url()}`;
  } catch (error) {
    if (!String(error).includes('net::ERR_CACHE_MISS')) throw error;
    return 'refused to re-POST';
  }
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
    await startAction(page, 'confirm_phone');
    const sessionId = await waitForHostedPage(page, stack, 'alice', before);
    await shot(page, 'hosted-code');
    expect(await dbFacts(stack, sessionId)).toEqual({ activity: 0, outcome: 'pending', reason: null });

    await enterCode(page, await stack.control.codeFor(sessionId));
    await declinePasskeyOffer(page);
    await arriveAt(page, `${stack.demoUrl}/verified/phone`);
    await visible(page.getByRole('heading', { name: 'Phone number confirmed' }));
    await visible(page.getByText(sessionId));
    await shot(page, 'verified');

    const me = await apiMe(context, stack);
    expect(me.user.phoneVerified).toBe(true);
    expect(me.actions.filter((a) => a.sessionId === sessionId)).toEqual([
      expect.objectContaining({ sessionId, action: 'confirm_phone', detail: 'Confirmed ••\u00a001' }),
    ]);
    expect(await dbFacts(stack, sessionId)).toEqual({ activity: 1, outcome: 'fulfilled', reason: null });
    await context.close();
  });

  it('changes the payout account (sensitive): bad input is refused with nothing written, then one fulfilment', async () => {
    const context = await newContext(browser);
    const page = await context.newPage();
    await signIn(page, stack, 'bob');

    // Server-side validation in the action's prepare: 400, no session created, no SMS, no attempt.
    const csrf = await page.locator('form:has(input[value="change_payout"]) input[name="_csrf"]').getAttribute('value');
    const statsBefore = await stack.control.stats();
    const attemptsBefore = await countAttempts();
    const refused = await context.request.post(`${stack.demoUrl}/verify/start`, {
      form: { _csrf: csrf!, action: 'change_payout', accountNumber: '12-34-ab' },
      headers: { origin: stack.demoUrl },
    });
    expect(refused.status()).toBe(400);
    expect(await refused.text()).toContain('8 to 17 digits');
    expect((await stack.control.stats()).creates).toBe(statsBefore.creates);
    expect(await countAttempts()).toBe(attemptsBefore);

    const before = await outboxSize();
    await page.locator('#accountNumber').fill('0123 4567 8901');
    await startAction(page, 'change_payout');
    const sessionId = await waitForHostedPage(page, stack, 'bob', before);
    await visible(page.getByText('You are confirming a sensitive action'));
    expect(
      stack.demo.db.prepare('SELECT COUNT(*) AS n FROM demo_payout_accounts WHERE user_id = ?').get(DEMO_USERS.bob.id),
    ).toEqual({ n: 0 });

    await enterCode(page, await stack.control.codeFor(sessionId));
    await declinePasskeyOffer(page);
    await arriveAt(page, `${stack.demoUrl}/verified/payout`);
    await visible(page.getByRole('heading', { name: 'Payout account changed' }));
    await visible(page.getByText('Payouts now go to the account ending 8901.'));

    const me = await apiMe(context, stack);
    expect(me.user.payoutAccount?.masked).toBe('••••8901');
    expect(me.actions.filter((a) => a.sessionId === sessionId)).toEqual([
      expect.objectContaining({ sessionId, action: 'change_payout', detail: 'Payout account set to ••••8901' }),
    ]);
    expect(
      stack.demo.db
        .prepare(
          'SELECT account_number AS accountNumber, session_id AS sessionId FROM demo_payout_accounts WHERE user_id = ?',
        )
        .get(DEMO_USERS.bob.id),
    ).toEqual({
      accountNumber: '012345678901',
      sessionId,
    });
    expect(await dbFacts(stack, sessionId)).toEqual({ activity: 1, outcome: 'fulfilled', reason: null });

    await page.getByRole('link', { name: 'View activity' }).click();
    await arriveAt(page, `${stack.demoUrl}/activity`);
    await visible(page.locator(`tr[data-session-id="${sessionId}"]`));
    await context.close();
  });

  it('five wrong codes end on the otp_locked page; nothing is fulfilled', async () => {
    const context = await newContext(browser);
    const page = await context.newPage();
    await signIn(page, stack, 'chen');
    const before = await outboxSize();
    await startAction(page, 'confirm_phone');
    const sessionId = await waitForHostedPage(page, stack, 'chen', before);
    const wrong = wrongCode(await stack.control.codeFor(sessionId));

    for (let left = 4; left >= 1; left--) {
      await enterCode(page, wrong);
      await visible(page.getByText('That code is not correct'));
      expect(await page.locator('#code-hint').innerText()).toContain(
        `${left} ${left === 1 ? 'attempt' : 'attempts'} left`,
      );
    }
    await enterCode(page, wrong);
    await arriveAt(page, new RegExp(`^${escapeRegExp(stack.returnUrl)}\\?session_id=`));
    await visible(page.getByRole('heading', { name: 'Too many incorrect codes' }));
    expect(await page.locator('[data-reason]').getAttribute('data-reason')).toBe('otp_locked');
    await shot(page, 'otp-locked');

    expect(await dbFacts(stack, sessionId)).toEqual({ activity: 0, outcome: 'failed', reason: 'otp_locked' });
    const me = await apiMe(context, stack);
    expect(me.actions.some((a) => a.sessionId === sessionId)).toBe(false);
    expect(me.user.phoneVerified).toBe(false);

    // "Start a new verification" restarts with a new session and a new state, and can succeed.
    const restartBefore = await outboxSize();
    await page.getByRole('button', { name: 'Start a new verification' }).click();
    const retried = await waitForHostedPage(page, stack, 'chen', restartBefore);
    expect(retried).not.toBe(sessionId);
    await enterCode(page, await stack.control.codeFor(retried));
    await declinePasskeyOffer(page);
    await arriveAt(page, `${stack.demoUrl}/verified/phone`);
    expect(await dbFacts(stack, retried)).toEqual({ activity: 1, outcome: 'fulfilled', reason: null });
    expect(await dbFacts(stack, sessionId)).toEqual({ activity: 0, outcome: 'failed', reason: 'otp_locked' });
    await context.close();
  });

  it('the back button after verifying and reloading the landing URL leave exactly one fulfilment', async () => {
    const context = await newContext(browser);
    const page = await context.newPage();
    const landings: string[] = [];
    page.on('request', (request) => {
      if (request.url().startsWith(`${stack.returnUrl}?`)) landings.push(request.url());
    });
    await signIn(page, stack, 'alice');
    const before = await outboxSize();
    await startAction(page, 'confirm_phone');
    const sessionId = await waitForHostedPage(page, stack, 'alice', before);
    await enterCode(page, await stack.control.codeFor(sessionId));
    await declinePasskeyOffer(page);
    await arriveAt(page, `${stack.demoUrl}/verified/phone`);
    expect(landings).toHaveLength(1);
    expect(await dbFacts(stack, sessionId)).toEqual({ activity: 1, outcome: 'fulfilled', reason: null });

    // Back: the entry before the success page is the hosted page's code POST (the kit's landing
    // and the success page were redirects from it), which the browser refuses to send again.
    const verifyPosts = (await stack.control.stats()).verifyPosts;
    expect(await backThroughHistory(page)).toBe('refused to re-POST');
    await page.waitForTimeout(300);
    expect((await stack.control.stats()).verifyPosts).toBe(verifyPosts);
    expect(await dbFacts(stack, sessionId)).toEqual({ activity: 1, outcome: 'fulfilled', reason: null });

    // Reload the landing URL (twice, in a fresh tab of the same browser): the stored successPath
    // again, and the action does not run again.
    const again = await context.newPage();
    for (let i = 0; i < 2; i++) {
      await again.goto(landings[0]!);
      await arriveAt(again, `${stack.demoUrl}/verified/phone`);
    }
    await again.reload();
    await arriveAt(again, `${stack.demoUrl}/verified/phone`);
    expect(await dbFacts(stack, sessionId)).toEqual({ activity: 1, outcome: 'fulfilled', reason: null });
    const me = await apiMe(context, stack);
    expect(me.actions.filter((a) => a.sessionId === sessionId)).toHaveLength(1);
    await context.close();
  });

  it('a user who closes the tab before the redirect is fulfilled once by the sweep', async () => {
    const context = await newContext(browser);
    const page = await context.newPage();
    await signIn(page, stack, 'bob');
    const before = await outboxSize();
    await page.locator('#accountNumber').fill('9876543210');
    await startAction(page, 'change_payout');
    const sessionId = await waitForHostedPage(page, stack, 'bob', before);

    // The code is accepted (the session is verified), and the hosted page offers a passkey before
    // sending the browser back; the user closes the tab there, so the landing never happens.
    await enterCode(page, await stack.control.codeFor(sessionId));
    await visible(page.getByRole('heading', { name: 'Code accepted' }));
    await page.close();

    expect(await dbFacts(stack, sessionId)).toEqual({ activity: 0, outcome: 'pending', reason: null });
    expect((await apiMe(context, stack)).actions.some((a) => a.sessionId === sessionId)).toBe(false);

    // The attempt becomes due for the sweep after the kit's first-check delay (3 min): run it as if then.
    const later = { ...contextOf(stack.demo.kit), now: () => Date.now() + 4 * 60_000 };
    const first = await runSweep(later, { owner: 'e2e-sweep' });
    expect(first).toMatchObject({ fulfilled: 1, errors: 0 });
    expect(await dbFacts(stack, sessionId)).toEqual({ activity: 1, outcome: 'fulfilled', reason: null });
    const second = await runSweep(later, { owner: 'e2e-sweep' });
    expect(second).toMatchObject({ claimed: 0, fulfilled: 0 });

    const me = await apiMe(context, stack);
    expect(me.actions.filter((a) => a.sessionId === sessionId)).toEqual([
      expect.objectContaining({ action: 'change_payout' }),
    ]);
    expect(me.user.payoutAccount?.masked).toBe('••••3210');

    const activity = await context.newPage();
    await activity.goto(`${stack.demoUrl}/activity`);
    await visible(activity.locator(`tr[data-session-id="${sessionId}"]`));
    expect(await activity.locator('tbody tr').count()).toBe(2); // the earlier change and this one
    await shot(activity, 'activity');
    await context.close();
  });

  it('the copyable sweep job (its own process, same env as the demo) fulfils a user who closed the tab', async () => {
    const context = await newContext(browser);
    const page = await context.newPage();
    await signIn(page, stack, 'alice');
    const before = await outboxSize();
    // Started four minutes ago by the demo's clock: the kit's first-check delay (3 min) has passed, it is due now.
    const sessionId = await stack.clock.shifted(-4 * 60_000, async () => {
      await startAction(page, 'confirm_phone');
      return waitForHostedPage(page, stack, 'alice', before);
    });
    await page.close(); // the tab is closed on the hosted page...
    // ...and the verification completes there anyway (as if finished just before closing).
    expect((await stack.control.complete(sessionId, { outcome: 'verified' })).status).toBe(200);
    expect(await dbFacts(stack, sessionId)).toEqual({ activity: 0, outcome: 'pending', reason: null });

    const job = await runJob(['--once'], {
      VERIFY_BASE_URL: stack.emulatorUrl,
      VERIFY_CLIENT_ID: stack.clientId,
      VERIFY_CLIENT_SECRET: stack.clientSecret,
      VERIFY_RETURN_URL: stack.returnUrl,
      DATABASE_PATH: stack.databasePath,
    });
    expect(job.code).toBe(0);
    expect(job.stdout).not.toContain(stack.clientSecret);
    const line = JSON.parse(job.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
    expect(line).toMatchObject({ event: 'sweep', mode: 'once', fulfilled: 1, errors: 0 });
    expect(await dbFacts(stack, sessionId)).toEqual({ activity: 1, outcome: 'fulfilled', reason: null });
    expect((await apiMe(context, stack)).actions.filter((a) => a.sessionId === sessionId)).toHaveLength(1);
    await context.close();
  });

  it('works with JavaScript disabled, through the visible Continue button', async () => {
    const context = await newContext(browser, { javaScriptEnabled: false });
    const page = await context.newPage();
    await signIn(page, stack, 'chen');
    const before = await outboxSize();
    await startAction(page, 'confirm_phone');
    await arriveAt(page, `${stack.demoUrl}/verify/start`);
    await visible(page.getByRole('heading', { name: 'Continue to verification' }));
    expect(await outboxSize()).toBe(before + 1); // the session exists; the handoff waits for the button
    await page.getByRole('button', { name: 'Continue' }).click();
    const sessionId = await waitForHostedPage(page, stack, 'chen', before);
    await enterCode(page, await stack.control.codeFor(sessionId));
    await declinePasskeyOffer(page);
    await arriveAt(page, `${stack.demoUrl}/verified/phone`);
    await visible(page.getByRole('heading', { name: 'Phone number confirmed' }));
    expect(await dbFacts(stack, sessionId)).toEqual({ activity: 1, outcome: 'fulfilled', reason: null });
    await context.close();
  });

  it('the hosted page refuses to load in an iframe (and loads top-level)', async () => {
    const context = await newContext(browser);
    const page = await context.newPage();
    const open = async () =>
      contextOf(stack.demo.kit).client.createSession(
        {
          returnUrl: stack.returnUrl,
          destination: '+15550100099',
          operationSensitivity: 'normal',
          userRef: 'iframe-probe',
          state: randomBytes(32).toString('base64url'),
          platform: 'web',
        },
        randomUUID(),
      );
    const framed = await open();
    await page.setContent(
      `<iframe name="target" title="hosted"></iframe>
       <form target="target" method="post" action="${framed.verifyUrl}"><input type="hidden" name="hx" value="${framed.handoff}"></form>`,
    );
    const answered = page.waitForResponse((r) => r.url() === framed.verifyUrl && r.request().method() === 'POST');
    await page.locator('form').evaluate((form: HTMLFormElement) => form.submit());
    const response = await answered;
    expect(response.headers()['x-frame-options']).toBe('DENY');
    expect(response.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
    await page.waitForTimeout(300);
    const frame = page.frame({ name: 'target' });
    expect(frame).not.toBeNull();
    expect(await frame!.locator('#code').count()).toBe(0);

    // Control: the same kind of form, top-level, shows the code page.
    const top = await open();
    await page.setContent(
      `<form method="post" action="${top.verifyUrl}"><input type="hidden" name="hx" value="${top.handoff}"></form>`,
    );
    await page.locator('form').evaluate((form: HTMLFormElement) => form.submit());
    await arriveAt(page, stack.verifyUrl);
    await visible(page.locator('#code'));
    await context.close();
  });

  it('two tabs verify two attempts side by side, each fulfilled once', async () => {
    const context = await newContext(browser);
    const phoneTab = await context.newPage();
    await signIn(phoneTab, stack, 'chen');
    const payoutTab = await context.newPage();
    await payoutTab.goto(`${stack.demoUrl}/`);

    let before = await outboxSize();
    await startAction(phoneTab, 'confirm_phone');
    const phoneSession = await waitForHostedPage(phoneTab, stack, 'chen', before);
    before = await outboxSize();
    await payoutTab.locator('#accountNumber').fill('5555-4444-3333');
    await startAction(payoutTab, 'change_payout');
    const payoutSession = await waitForHostedPage(payoutTab, stack, 'chen', before);
    expect(payoutSession).not.toBe(phoneSession);

    // Finish the second tab first, then the first.
    await enterCode(payoutTab, await stack.control.codeFor(payoutSession));
    await declinePasskeyOffer(payoutTab);
    await arriveAt(payoutTab, `${stack.demoUrl}/verified/payout`);
    await enterCode(phoneTab, await stack.control.codeFor(phoneSession));
    await declinePasskeyOffer(phoneTab);
    await arriveAt(phoneTab, `${stack.demoUrl}/verified/phone`);

    expect(await dbFacts(stack, phoneSession)).toEqual({ activity: 1, outcome: 'fulfilled', reason: null });
    expect(await dbFacts(stack, payoutSession)).toEqual({ activity: 1, outcome: 'fulfilled', reason: null });
    const me = await apiMe(context, stack);
    expect(me.actions.filter((a) => a.sessionId === phoneSession).map((a) => a.action)).toEqual(['confirm_phone']);
    expect(me.actions.filter((a) => a.sessionId === payoutSession).map((a) => a.action)).toEqual(['change_payout']);
    expect(me.user.payoutAccount?.masked).toBe('••••3333');
    await context.close();
  });

  it('/api/me answers 401 JSON without a signed-in user', async () => {
    const response = await fetch(`${stack.demoUrl}/api/me`);
    expect(response.status).toBe(401);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({ error: 'not_signed_in', message: expect.any(String) });
  });
});

describe('passkeys on the hosted page: why a stable userRef matters', () => {
  // A stack of its own: a fresh emulator, so no other test meets Alice's passkey.
  let own: Stack;
  beforeAll(async () => {
    own = await startStack();
  });
  afterAll(() => own?.close());

  it('the first code offers a passkey; the next uses it, no SMS, fulfilled once; another userRef: SMS', async () => {
    const context = await newContext(browser);
    const page = await context.newPage();
    await addVirtualAuthenticator(context, page);
    await signIn(page, own, 'alice');

    // First verification (change_payout proves the user): the SMS code, then the offer to save a passkey.
    let sent = (await own.control.outbox()).length;
    await page.locator('#accountNumber').fill('1111 2222 3333');
    await startAction(page, 'change_payout');
    const first = await waitForHostedPage(page, own, 'alice', sent);
    await enterCode(page, await own.control.codeFor(first));
    await visible(page.getByRole('heading', { name: 'Code accepted' }));
    await shot(page, 'passkey-offer');
    await page.getByRole('button', { name: 'Create a passkey' }).click();
    await arriveAt(page, `${own.demoUrl}/verified/payout`);
    expect(await dbFacts(own, first)).toEqual({ activity: 1, outcome: 'fulfilled', reason: null });

    // Next verification, same userRef (Alice's permanent id): "Use your passkey", and no SMS at all.
    await page.goto(`${own.demoUrl}/`);
    sent = (await own.control.outbox()).length;
    await page.locator('#accountNumber').fill('2468 1357 9000');
    await startAction(page, 'change_payout');
    await arriveAt(page, own.verifyUrl);
    await visible(page.getByRole('button', { name: 'Use your passkey' }));
    expect(await page.locator('#code').count()).toBe(0);
    await shot(page, 'passkey-use');
    await page.getByRole('button', { name: 'Use your passkey' }).click();
    await arriveAt(page, `${own.demoUrl}/verified/payout`);
    await visible(page.getByText('Payouts now go to the account ending 9000.'));
    expect((await own.control.outbox()).length).toBe(sent);

    // The kit fulfilled it exactly as an SMS-verified session: re-read, one transaction, once.
    const me = await apiMe(context, own);
    const payout = me.actions.filter((a) => a.action === 'change_payout' && a.detail.endsWith('9000'));
    expect(payout).toHaveLength(1);
    expect(await dbFacts(own, payout[0]!.sessionId)).toEqual({ activity: 1, outcome: 'fulfilled', reason: null });
    expect(me.user.payoutAccount?.masked).toBe('••••9000');

    // confirm_phone proves the number: her passkey (the user's factor) does not answer for it.
    await page.goto(`${own.demoUrl}/`);
    sent = (await own.control.outbox()).length;
    await startAction(page, 'confirm_phone');
    await waitForHostedPage(page, own, 'alice', sent);
    expect(await page.getByRole('button', { name: 'Use your passkey' }).count()).toBe(0);

    // The same person arriving under another userRef (an app that used the email) gets the SMS page.
    const other = await contextOf(own.demo.kit).client.createSession(
      {
        returnUrl: own.returnUrl,
        destination: DEMO_USERS.alice.phone,
        operationSensitivity: 'normal',
        userRef: 'alice@example.com',
        state: randomBytes(32).toString('base64url'),
        platform: 'web',
      },
      randomUUID(),
    );
    expect((await own.control.outbox()).filter((m) => m.sessionId === other.sessionId)).toHaveLength(1);
    await page.goto('about:blank'); // out of the demo's page and its CSP (form-action 'self')
    await page.setContent(
      `<form method="post" action="${other.verifyUrl}"><input type="hidden" name="hx" value="${other.handoff}"></form>`,
    );
    await page.locator('form').evaluate((form: HTMLFormElement) => form.submit());
    await arriveAt(page, own.verifyUrl);
    await visible(page.locator('#code'));
    expect(await page.getByRole('button', { name: 'Use your passkey' }).count()).toBe(0);
    await context.close();
  });
});

describe('leaks', () => {
  it('no URL, Referer or other header the browsers sent or received in this suite carries the client secret or a handoff', () => {
    // Runs last in this file: every flow above has been recorded.
    expect(browserTraffic.handoffs.size).toBeGreaterThan(5);
    expect(browserTraffic.lines.length).toBeGreaterThan(100);
    const basic = Buffer.from(`${stack.clientId}:${stack.clientSecret}`).toString('base64');
    const needles = [stack.clientSecret, encodeURIComponent(stack.clientSecret), basic, ...browserTraffic.handoffs];
    const hits = browserTraffic.lines.filter((line) => needles.some((needle) => line.includes(needle)));
    expect(hits).toEqual([]);
    expect(stack.emulatorLog.filter((line) => needles.some((needle) => line.includes(needle)))).toEqual([]);
  });
});

function runJob(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const script = join(import.meta.dirname, '../../demo-app/sweep-job.ts');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function countAttempts(): Promise<number> {
  return (await stack.demo.store.listAttempts({ limit: Number.MAX_SAFE_INTEGER })).length;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
