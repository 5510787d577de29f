/**
 * One call that gives a test browser a step-up grant through the real flow (requireRecentVerification):
 * from the kit's "Confirm it's you" page, press its button (the kit's start), walk the hosted page
 * with the texted code, open the landing, and follow it to where the kit sends the user back: the
 * guarded page itself, or the confirmation of a kept form.
 */
import { walkHostedPage, type WalkOptions } from './hosted-walk.ts';
import { pageExcerpt } from './html.ts';
import { namedUrl } from './named-url.ts';
import { createTestBrowser, formsOf, type TestBrowser, type TestPage } from './test-browser.ts';

export interface StepUpOptions extends Pick<WalkOptions, 'emulator' | 'passkey' | 'passkeyOffer'> {
  /** The signed-in browser that met the guard. Default: a new one (then only a page URL can work). */
  browser?: TestBrowser;
}

export interface StepUpResult {
  /** The verification that made the grant. */
  sessionId: string;
  /** Where the landing sent the browser: the guarded path, or the kit's confirmation of a kept form. */
  returnedTo: string;
  /** That page, opened in the same browser. */
  page: TestPage;
}

function fail(page: TestPage, what: string): never {
  throw new Error(
    `verifyStepUp: ${what} (${namedUrl(page.url)} answered ${page.status}): ${pageExcerpt(page.html, 400)}`,
  );
}

/**
 * `guarded` is the guard's answer (a kept form's page, or the page of a GET) or the URL of a guarded
 * page to open first. Rejects when it is not the kit's "Confirm it's you" page.
 */
export async function verifyStepUp(guarded: TestPage | string, options: StepUpOptions): Promise<StepUpResult> {
  const browser = options.browser ?? createTestBrowser();
  const confirm = typeof guarded === 'string' ? await browser.get(guarded) : guarded;
  const form = formsOf(confirm).find((f) => f.fields.intent !== undefined && f.fields.action !== undefined);
  if (form === undefined) return fail(confirm, 'not the kit’s "Confirm it’s you" page (already granted?)');
  const autoSubmit = await browser.submitForm(confirm, {}, { action: form.action, having: form.fields });
  const walked = await walkHostedPage(autoSubmit, { ...options, browser });
  if (walked.outcome !== 'verified') return fail(autoSubmit, `the hosted page ended ${walked.outcome}`);
  const landing = await browser.get(walked.landingUrl);
  if (landing.location === undefined) return fail(landing, 'the landing did not send the user back');
  return { sessionId: walked.sessionId, returnedTo: landing.location, page: await browser.get(landing.location) };
}
