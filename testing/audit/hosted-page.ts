/**
 * The service's hosted page as a user walks it in the audit's browser: the handoff redeemed, the
 * code texted to the user's number typed, the enrol offer (if shown) declined.
 */
import type { EmulatorControl } from '../../emulator/control/control-client.ts';
import { hiddenField, type AuditAgent } from './agent.ts';

/** The attempt's handoff and where it is posted (the start's auto-submit form), with its session. */
export interface HandedOff {
  verifyUrl: string;
  handoff: string;
  sessionId: string;
}

/** Walks the hosted page for `attempt`; returns where the service sends the browser back. */
export async function walkHostedPage(control: EmulatorControl, agent: AuditAgent, attempt: HandedOff): Promise<string> {
  const page = await agent.postForm(attempt.verifyUrl, { hx: attempt.handoff });
  const binding = hiddenField(page.body, 'page_binding');
  if (page.status !== 200 || binding === undefined) throw new Error(`the hosted page answered ${page.status}`);
  const code = await control.latestCode({ sessionId: attempt.sessionId });
  const answer = await agent.postForm(`${attempt.verifyUrl}/code`, { page_binding: binding, code });
  if (answer.status === 303 && answer.location !== null) return answer.location;
  const next = hiddenField(answer.body, 'page_binding') ?? binding;
  const done = await agent.postForm(`${attempt.verifyUrl}/continue`, { page_binding: next });
  if (done.status !== 303 || done.location === null) {
    throw new Error(`the hosted page's continue answered ${done.status}`);
  }
  return done.location;
}
