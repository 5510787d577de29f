/**
 * `assertionExchanged` is a legacy field of the status read with no meaning; clients ignore it. The
 * emulator answers false, and a test can make it answer true (`injectFaults({ assertionExchanged:
 * true })`), so an integration that reads it (refusing, or requiring, either value) is found here
 * rather than against the service, whose value for it is not stated.
 */
import { describe, expect, it } from 'vitest';
import { WEB_CLIENT, newSession, readSession, useTestEmulator } from '../support/emulator.ts';

const emulator = useTestEmulator({}, { resetEach: true });

describe('the legacy assertionExchanged field of the status read', () => {
  it('is false by default', async () => {
    const { sessionId } = await newSession(emulator.url, WEB_CLIENT);
    expect((await readSession(emulator.url, WEB_CLIENT, sessionId)).body).toMatchObject({ assertionExchanged: false });
  });

  it('is true for pending, verified and failed sessions once a test asks, and nothing else changes', async () => {
    expect((await emulator.control.injectFaults({ assertionExchanged: true })).assertionExchanged).toBe(true);
    const pending = await newSession(emulator.url, WEB_CLIENT);
    const verified = await newSession(emulator.url, WEB_CLIENT);
    const failed = await newSession(emulator.url, WEB_CLIENT);
    await emulator.control.completeSession(verified.sessionId, 'verified');
    await emulator.control.completeSession(failed.sessionId, 'failed', 'otp_locked');
    for (const [session, status] of [
      [pending, 'pending'],
      [verified, 'verified'],
      [failed, 'failed'],
    ] as const) {
      const read = await readSession(emulator.url, WEB_CLIENT, session.sessionId);
      expect(read.body).toMatchObject({
        status,
        state: session.state,
        userRef: session.userRef,
        assertionExchanged: true,
      });
    }
  });

  it('is false again after reset, and a value that is not a boolean is refused', async () => {
    await emulator.control.injectFaults({ assertionExchanged: true });
    await emulator.control.reset();
    const { sessionId } = await newSession(emulator.url, WEB_CLIENT);
    expect((await readSession(emulator.url, WEB_CLIENT, sessionId)).body).toMatchObject({ assertionExchanged: false });
    expect((await emulator.control.setFaults({ assertionExchanged: 1 })).status).toBe(400);
  });
});
