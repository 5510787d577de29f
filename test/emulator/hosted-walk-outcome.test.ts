/**
 * walkHostedPage can fail: its `outcome` is how the hosted page ended the session (as the emulator
 * holds it), not what the walk meant to do; and it submits the handoff as the app's own form does,
 * so a form that would put the handoff in a URL (GET) fails the walk, as the service refuses it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestBrowser,
  startEmulator,
  walkHostedPage,
  type RunningEmulator,
  type TestPage,
} from '../../testing/testing.ts';
import { WEB_CLIENT, newSession, readSession } from '../support/emulator.ts';

let emulator: RunningEmulator;
beforeAll(async () => {
  emulator = await startEmulator({ port: 0, clients: [WEB_CLIENT], log: () => {} });
});
afterAll(() => emulator.close());

/** The auto-submit page an app serves at its start route, with the form written as `formTag`. */
function autoSubmitPage(formTag: string, handoff: string): TestPage {
  return {
    url: 'http://localhost:3999/verify/start',
    status: 200,
    headers: new Headers({ 'content-type': 'text/html' }),
    html: `<!doctype html><html><body>${formTag}<input type="hidden" name="hx" value="${handoff}"><button>Continue</button></form></body></html>`,
    location: undefined,
  };
}

describe('walkHostedPage', () => {
  it('outcome is how the hosted page ended the session: five wrong codes first lock it (otp_locked)', async () => {
    const session = await newSession(emulator.url, WEB_CLIENT);
    const page = autoSubmitPage(`<form method="post" action="${session.verifyUrl}">`, session.handoff);
    const walked = await walkHostedPage(page, { emulator, browser: createTestBrowser(), wrongCodesFirst: 5 });
    const status = (await readSession(emulator.url, WEB_CLIENT, session.sessionId)).body;
    expect(status).toMatchObject({ status: 'failed', reason: 'otp_locked' });
    // Documented: "outcome: How the hosted page ended the session."
    expect(walked.outcome).toBe(status.status);
  });

  it('an auto-submit form that GETs verifyUrl (the handoff in the URL, which the service refuses) fails the walk', async () => {
    const session = await newSession(emulator.url, WEB_CLIENT);
    const page = autoSubmitPage(`<form method="get" action="${session.verifyUrl}">`, session.handoff);
    // A browser submits this form as GET verifyUrl?hx=…: the service answers 400 and the flow never starts.
    await expect(walkHostedPage(page, { emulator, browser: createTestBrowser() })).rejects.toThrow(/walkHostedPage/);
  });
});
