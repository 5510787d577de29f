/**
 * The spec leaves open whether a session moves out of `verified` or `failed` ("Moves out of
 * verified and failed ...: not shown"). The emulator never moves one by itself, and a test can move
 * an ended session to another end (`moveEndedSession`, or `moveEnded: true` on the control API's
 * complete), so an integration that takes the first end it reads as final for ever is found here.
 */
import { describe, expect, it } from 'vitest';
import { WEB_CLIENT, newSession, readSession, useTestEmulator } from '../support/emulator.ts';

const emulator = useTestEmulator({}, { resetEach: true });

describe('moves out of an ended session, which the spec leaves open', () => {
  it('a failed session can be moved to verified, and a verified one to failed with a reason', async () => {
    const session = await newSession(emulator.url, WEB_CLIENT);
    await emulator.control.completeSession(session.sessionId, 'failed', 'otp_locked');
    await emulator.control.moveEndedSession(session.sessionId, 'verified');
    const verified = await readSession(emulator.url, WEB_CLIENT, session.sessionId);
    expect(verified.body).toMatchObject({ status: 'verified', state: session.state, userRef: session.userRef });
    expect(verified.body).not.toHaveProperty('reason');

    await emulator.control.moveEndedSession(session.sessionId, 'failed', 'session_binding_failed');
    const failed = await readSession(emulator.url, WEB_CLIENT, session.sessionId);
    expect(failed.body).toMatchObject({ status: 'failed', reason: 'session_binding_failed' });
  });

  it('without moveEnded an ended session still answers 409 and keeps its end', async () => {
    const { sessionId } = await newSession(emulator.url, WEB_CLIENT);
    await emulator.control.completeSession(sessionId, 'verified');
    const again = await emulator.control.complete(sessionId, { outcome: 'failed', reason: 'otp_locked' });
    expect(again.status).toBe(409);
    expect((await readSession(emulator.url, WEB_CLIENT, sessionId)).body).toMatchObject({ status: 'verified' });
    expect(
      (await emulator.control.complete(sessionId, { outcome: 'failed', reason: 'x', moveEnded: 'yes' })).status,
    ).toBe(400);
  });

  it('a pending session given moveEnded simply ends', async () => {
    const { sessionId } = await newSession(emulator.url, WEB_CLIENT);
    await emulator.control.moveEndedSession(sessionId, 'verified');
    expect((await readSession(emulator.url, WEB_CLIENT, sessionId)).body).toMatchObject({ status: 'verified' });
  });
});
