/**
 * One call that verifies a number as a user types it, for an action with `destination: 'entered'`:
 * submit the app's start form with the number in its `phone` field, walk the hosted page with the
 * code texted to that number, and open the landing in the same browser. It says which number the
 * service texted (E.164), so a test checks what the kit made of "07400 123456".
 */
import { ENTERED_NUMBER_FIELD } from './audit/world.ts';
import { walkHostedPage, type WalkOptions } from './hosted-walk.ts';
import { pageExcerpt } from './html.ts';
import { namedUrl } from './named-url.ts';
import { createTestBrowser, formsOf, type ParsedForm, type TestBrowser, type TestPage } from './test-browser.ts';

export interface EnteredNumberOptions extends Pick<WalkOptions, 'emulator' | 'code' | 'wrongCodesFirst'> {
  /** The signed-in browser. Default: a new one (then only a page that needs no sign-in can work). */
  browser?: TestBrowser;
  /** The action whose form to submit (the form's `action` field). Default: the page's first form with a `phone` field. */
  action?: string;
}

export interface EnteredNumberResult {
  sessionId: string;
  /** The number the service texted the code to: the typed one as the kit normalised it (E.164). */
  textedTo: string;
  /** How the hosted page ended the session. */
  outcome: 'verified' | 'failed';
  /** The landing, opened in the same browser (a redirect to the action's successPath when it was fulfilled). */
  landing: TestPage;
}

function fail(page: TestPage, what: string): never {
  throw new Error(
    `verifyEnteredNumber: ${what} (${namedUrl(page.url)} answered ${page.status}): ${pageExcerpt(page.html, 400)}`,
  );
}

function numberForm(page: TestPage, action: string | undefined): ParsedForm | undefined {
  // Read as a browser submits it: the field however the page quotes it, inside the form or joined with form=.
  return formsOf(page).find(
    (form) =>
      form.entries.some(([name]) => name === ENTERED_NUMBER_FIELD) &&
      (action === undefined || form.fields.action === action),
  );
}

/**
 * `startPage` is a page of the app holding the start form (or its URL, opened first); `number` is
 * typed as a user would ("07400 123456", "+33 6 12 34 56 78"). Rejects when the page has no such
 * form or the app does not start a verification for the number (a 422 number form, a 429).
 */
export async function verifyEnteredNumber(
  startPage: TestPage | string,
  number: string,
  options: EnteredNumberOptions,
): Promise<EnteredNumberResult> {
  const browser = options.browser ?? createTestBrowser();
  const page = typeof startPage === 'string' ? await browser.get(startPage) : startPage;
  const form = numberForm(page, options.action);
  if (form === undefined) {
    const which = options.action === undefined ? '' : ` for the action ${options.action}`;
    return fail(page, `no form with a \`${ENTERED_NUMBER_FIELD}\` field${which}`);
  }
  // Submitted as the browser submits this form, told from another posting to the same start route by its fields.
  const autoSubmit = await browser.submitForm(
    page,
    { [ENTERED_NUMBER_FIELD]: number },
    { action: form.action, having: form.fields },
  );
  if (autoSubmit.status !== 200) return fail(autoSubmit, 'the app did not start a verification for that number');
  const walked = await walkHostedPage(autoSubmit, { ...options, browser });
  const texted = (await options.emulator.control.sentMessages()).filter((m) => m.sessionId === walked.sessionId);
  const textedTo = texted.at(-1)?.to;
  if (textedTo === undefined) return fail(autoSubmit, 'the service sent no text for that verification');
  return {
    sessionId: walked.sessionId,
    textedTo,
    outcome: walked.outcome,
    landing: await browser.get(walked.landingUrl),
  };
}
