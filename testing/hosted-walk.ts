/**
 * One call that goes through the hosted page as a browser does, from the kit's auto-submit page to
 * the landing URL: the handoff POSTed to verifyUrl, then the right code (or wrong ones), a passkey
 * where this browser saved one, and the passkey offer declined or taken. It returns the landing URL
 * the service redirected to, with its real `state`, for the test to open in the same browser.
 */
import type { EmulatorControl } from '../emulator/control/control-client.ts';
import { createTestBrowser, formsOf, type ParsedForm, type TestBrowser, type TestPage } from './test-browser.ts';
import { attribute, pageExcerpt } from './html.ts';
import { namedUrl } from './named-url.ts';

export interface WalkOptions {
  /** The emulator that texted the code (what `startEmulator` returned), or its control. */
  emulator: { control: EmulatorControl };
  /** The browser that started the verification (its cookies, its passkeys). Default: a new one. */
  browser?: TestBrowser;
  /** `'right'` (default): the texted code. `'wrong'`: wrong codes until the page gives up (`otp_locked`). */
  code?: 'right' | 'wrong';
  /** Wrong codes entered before the right one. Default 0. */
  wrongCodesFirst?: number;
  /** The offer to save a passkey after a right code: `'decline'` ("Not now", default) or `'save'` in this browser. */
  passkeyOffer?: 'decline' | 'save';
  /** When the page offers the passkey this browser saved: `'use'` it (default), or ask for an `'sms'`. */
  passkey?: 'use' | 'sms';
}

export interface HostedPageResult {
  /** Where the hosted page sent the browser: the registered returnUrl with `session_id` and `state`. */
  landingUrl: string;
  sessionId: string;
  /** The `state` the kit stored for this attempt, as the service echoed it. */
  state: string;
  /** How the hosted page ended the session. */
  outcome: 'verified' | 'failed';
  /** What the user answered with. */
  via: 'sms' | 'passkey';
}

/** Steps enough for every wrong code, the offer and a detour to the SMS. */
const MAX_STEPS = 20;

interface Walk {
  browser: TestBrowser;
  control: EmulatorControl;
  options: WalkOptions;
  wrongLeft: number;
  via: 'sms' | 'passkey';
}

function fail(page: TestPage, what: string): never {
  throw new Error(
    `walkHostedPage: ${what} (${namedUrl(page.url)} answered ${page.status}): ${pageExcerpt(page.html, 400)}`,
  );
}

function passkeyForm(page: TestPage, mode: 'verify' | 'enrol'): ParsedForm | undefined {
  return formsOf(page).find((form) => attribute(form.attributes, 'data-mode') === mode);
}

function formTo(page: TestPage, path: string): ParsedForm | undefined {
  return formsOf(page).find((form) => new URL(form.action).pathname === path);
}

/** The WebAuthn ceremony's inputs from a passkey form, as the page's script reads them. */
function ceremony(page: TestPage, form: ParsedForm) {
  const options = JSON.parse(attribute(form.attributes, 'data-options') ?? '{}') as {
    challenge: string;
    rpId?: string;
    rp?: { id?: string };
    allowCredentials?: { id: string }[];
  };
  const rpId = options.rpId ?? options.rp?.id ?? new URL(page.url).hostname;
  return { challenge: options.challenge, origin: new URL(page.url).origin, rpId, allow: options.allowCredentials };
}

const sessionOf = (form: ParsedForm) => (form.fields.page_binding ?? '').replace(/\.[^.]*$/, '');

async function answerCode(walk: Walk, page: TestPage, form: ParsedForm): Promise<TestPage> {
  const right = await walk.control.latestCode({ sessionId: sessionOf(form) });
  const wrong = String((Number(right) + 1) % 1_000_000).padStart(6, '0');
  const wrongNow = walk.options.code === 'wrong' || walk.wrongLeft > 0;
  if (walk.wrongLeft > 0) walk.wrongLeft -= 1;
  return walk.browser.post(form.action, { ...form.fields, code: wrongNow ? wrong : right }, page.url);
}

/** One step on the hosted page: the form a user would use on it. */
async function step(walk: Walk, page: TestPage): Promise<TestPage> {
  const { browser, options } = walk;
  const usePasskey = passkeyForm(page, 'verify');
  if (usePasskey !== undefined) {
    const input = ceremony(page, usePasskey);
    const saved = browser.hasPasskey(input.rpId) ? browser.authenticator(input.rpId) : undefined;
    const allowed = saved !== undefined && (input.allow ?? []).some((credential) => credential.id === saved.id);
    if (allowed && options.passkey !== 'sms') {
      walk.via = 'passkey';
      const credential = JSON.stringify(saved.assert(input));
      return browser.post(usePasskey.action, { ...usePasskey.fields, credential }, page.url);
    }
    return browser.submitForm(page, {}, { action: '/verify/sms' });
  }
  const code = formTo(page, '/verify/code');
  if (code !== undefined) return answerCode(walk, page, code);
  const offer = passkeyForm(page, 'enrol');
  if (offer !== undefined && options.passkeyOffer === 'save') {
    const input = ceremony(page, offer);
    const credential = JSON.stringify(browser.authenticator(input.rpId).register(input));
    return browser.post(offer.action, { ...offer.fields, credential }, page.url);
  }
  if (formTo(page, '/verify/continue') !== undefined)
    return browser.submitForm(page, {}, { action: '/verify/continue' });
  return fail(page, 'not a page of the hosted flow');
}

/**
 * Goes through the hosted page from `autoSubmit` (the answer of your app's start route, or its
 * HTML with the browser's URL) and returns the landing URL with its `state`. Open it with the same
 * browser: `await browser.get(result.landingUrl)`.
 */
export async function walkHostedPage(autoSubmit: TestPage, options: WalkOptions): Promise<HostedPageResult> {
  const browser = options.browser ?? createTestBrowser();
  const handoff = formsOf(autoSubmit).find((form) => form.fields.hx !== undefined);
  if (autoSubmit.status !== 200 || handoff === undefined) return fail(autoSubmit, 'not the auto-submit page');
  const walk: Walk = {
    browser,
    control: options.emulator.control,
    options,
    wrongLeft: options.wrongCodesFirst ?? 0,
    via: 'sms',
  };
  // As the page's own form sends it (a form that GETs verifyUrl puts the handoff in its URL, and
  // the hosted page refuses it, as the service's does).
  let page = await browser.submitForm(
    autoSubmit,
    {},
    { action: handoff.action, having: { hx: handoff.fields.hx ?? '' } },
  );
  for (let steps = 0; page.location === undefined; steps++) {
    if (page.status !== 200 || steps === MAX_STEPS) return fail(page, 'the hosted page did not send the browser back');
    page = await step(walk, page);
  }
  const landing = new URL(page.location);
  const sessionId = landing.searchParams.get('session_id');
  const state = landing.searchParams.get('state');
  if (sessionId === null || state === null) return fail(page, 'a redirect without session_id and state');
  // How the session ended, as the emulator holds it: not what the walk meant to do.
  const ended = await walk.control.sessionByHandoff(handoff.fields.hx ?? '');
  if (ended.status === 'pending')
    return fail(page, 'the hosted page sent the browser back with the session still pending');
  return { landingUrl: landing.href, sessionId, state, outcome: ended.status, via: walk.via };
}
