/**
 * The demo's "Change phone number" as its user starts it over HTTP: the start answers "Confirm it's
 * you" and texts nothing; the user presses its button, enters the code texted to their current
 * number on the hosted page, lands, and confirms; only then does the kept start run, texting the
 * typed number. Afterwards the grant lets this browser start the change again directly.
 */
import { expect } from 'vitest';
import { CHANGE_PHONE, CHANGE_PHONE_STEP_UP } from '../../demo-app/domain.ts';
import { formsIn } from '../../testing/html-forms.ts';
import { parseHandoffPage, type Agent, type Started } from '../support/agent.ts';
import { confirmForm } from '../support/step-up.ts';

export async function changePhoneAfterStepUp(agent: Agent, phone: string): Promise<Started> {
  const asked = await agent.tryStartWithNumber(CHANGE_PHONE, phone);
  expect(parseHandoffPage(asked.body), 'the change started before its step-up').toBeUndefined();
  const stepUpForm = confirmForm(asked.body);
  expect(stepUpForm.action).toBe(CHANGE_PHONE_STEP_UP);
  const stepUp = await agent.start(stepUpForm.action, { intent: stepUpForm.intent });
  const landing = await agent.request(await enterTextedCode(agent, stepUp));
  expect(landing.status).toBe(303);
  const confirmation = await agent.request(landing.location!);
  const confirm = formsIn(confirmation.body).find((form) => form.fields._verify_kit_intent !== undefined);
  expect(confirm, 'no confirmation of the kept start').toBeDefined();
  const ran = await agent.postStart(confirm!.fields);
  const handoff = parseHandoffPage(ran.body);
  expect(ran.status).toBe(200);
  expect(handoff, 'the confirmed start handed nothing off').toBeDefined();
  const { sessionId, state } = await agent.site.latestAttempt!();
  return { response: ran, html: ran.body, ...handoff!, sessionId, state };
}

/** The hosted page as a user answers it: the code texted, then "Not now" to the passkey offer; where it sends them. */
async function enterTextedCode(agent: Agent, started: Started): Promise<string> {
  const { verifyUrl } = started;
  const page = await agent.postForm(verifyUrl, { hx: started.handoff });
  const codeForm = formsIn(page.body).find((form) => form.action.endsWith('/verify/code'));
  expect(codeForm, `the hosted page answered ${page.status} without its code form`).toBeDefined();
  const code = await agent.site.control!.codeFor(started.sessionId);
  const answered = await agent.postForm(`${verifyUrl}/code`, { ...codeForm!.fields, code });
  if (answered.status === 303) return answered.location!;
  const offer = formsIn(answered.body).find((form) => form.action.endsWith('/verify/continue'));
  expect(offer, `the code answered ${answered.status} without the passkey offer`).toBeDefined();
  const done = await agent.postForm(`${verifyUrl}/continue`, offer!.fields);
  expect(done.status).toBe(303);
  return done.location!;
}
