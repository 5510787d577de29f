/**
 * The `./testing` entry as an integrator's suite uses it: `startEmulator` returns `{ url, close,
 * control }`, and each typed control call does what it says against the running emulator.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EmulatorControlError, emulatorControl, startEmulator, type RunningEmulator } from '../../emulator/testing.ts';
import { WEB_CLIENT, newSession, openHostedPage, readSession } from '../support/emulator.ts';

let emulator: RunningEmulator;
beforeAll(async () => {
  emulator = await startEmulator({ port: 0, clients: [WEB_CLIENT], log: () => {} });
});
afterAll(() => emulator.close());
beforeEach(() => emulator.control.reset());

describe('hosted-sms-verify-kit/testing', () => {
  it('completeSession ends a pending session as verified, which the status read then reports', async () => {
    const session = await newSession(emulator.url, WEB_CLIENT);
    await emulator.control.completeSession(session.sessionId, 'verified');
    expect((await readSession(emulator.url, WEB_CLIENT, session.sessionId)).body).toMatchObject({
      status: 'verified',
      state: session.state,
      userRef: session.userRef,
    });
  });

  it('completeSession ends a session as failed with the reason, and refuses a second ending with 409', async () => {
    const session = await newSession(emulator.url, WEB_CLIENT);
    await emulator.control.completeSession(session.sessionId, 'failed', 'otp_locked');
    expect((await readSession(emulator.url, WEB_CLIENT, session.sessionId)).body).toMatchObject({
      status: 'failed',
      reason: 'otp_locked',
    });
    const second = emulator.control.completeSession(session.sessionId, 'verified');
    await expect(second).rejects.toBeInstanceOf(EmulatorControlError);
    await expect(second).rejects.toMatchObject({ status: 409, code: 'session_already_ended' });
  });

  it('latestCode reads the newest code texted for a session or for a destination', async () => {
    const first = await newSession(emulator.url, WEB_CLIENT, { destination: '+15550100001' });
    const second = await newSession(emulator.url, WEB_CLIENT, { destination: '+15550100001' });
    const other = await newSession(emulator.url, WEB_CLIENT, { destination: '+15550100002' });
    const messages = await emulator.control.sentMessages();
    const codeOf = (sessionId: string) => messages.find((message) => message.sessionId === sessionId)!.code;

    expect(await emulator.control.latestCode({ sessionId: first.sessionId })).toBe(codeOf(first.sessionId));
    expect(await emulator.control.latestCode({ destination: '+15550100001' })).toBe(codeOf(second.sessionId));
    expect(await emulator.control.latestCode({ destination: '+15550100002' })).toBe(codeOf(other.sessionId));
    await expect(emulator.control.latestCode({ destination: '+15550100009' })).rejects.toMatchObject({
      code: 'no_sms_sent',
    });
  });

  it('advanceClock moves the virtual clock: a handoff older than 120 s is refused', async () => {
    const session = await newSession(emulator.url, WEB_CLIENT);
    await emulator.control.advanceClock(121);
    expect((await openHostedPage(session.verifyUrl, session.handoff)).response.status).toBe(400);
  });

  it('injectFaults makes the next create fail with the chosen status, and stats count what happened', async () => {
    expect(await emulator.control.injectFaults({ createFailures: 1, createStatus: 503 })).toMatchObject({
      createFailures: 1,
      createStatus: 503,
    });
    await expect(newSession(emulator.url, WEB_CLIENT)).rejects.toThrow(/create failed: 503/);
    await newSession(emulator.url, WEB_CLIENT);
    expect(await emulator.control.stats()).toMatchObject({ creates: 1, smsSent: 1 });
  });

  it('reset forgets messages and stats', async () => {
    await newSession(emulator.url, WEB_CLIENT);
    await emulator.control.reset();
    expect(await emulator.control.sentMessages()).toEqual([]);
    expect(await emulator.control.stats()).toMatchObject({ creates: 0, smsSent: 0 });
  });

  it('emulatorControl(url) drives an emulator started elsewhere; with control off it says how to fix it', async () => {
    const production = await startEmulator({ port: 0, clients: [WEB_CLIENT], control: false, log: () => {} });
    try {
      await expect(emulatorControl(production.url).stats()).rejects.toThrow(/started with control: true/);
      expect(await emulatorControl(`${emulator.url}/`).stats()).toMatchObject({ creates: 0 });
    } finally {
      await production.close();
    }
  });
});
