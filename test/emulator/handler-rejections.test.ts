/**
 * A service call whose handling fails after it began (here the emulator's clock throws) answers the
 * service's 500 error shape, and the emulator goes on serving. On Express 4, which leaves a route's
 * rejected promise unhandled, the call would get no answer at all without the emulator forwarding
 * the rejection itself.
 */
import { describe, expect, it } from 'vitest';
import { createTestClock, type TestClock } from '../../emulator/clock.ts';
import {
  WEB_CLIENT,
  createSession,
  newSession,
  readSession,
  sessionBody,
  useTestEmulator,
} from '../support/emulator.ts';

/** The test clock, except that `now` throws while `failing` is set. */
function failingClock(): TestClock & { failing: boolean } {
  const clock = createTestClock();
  const wrapped = {
    failing: false,
    now: () => {
      if (wrapped.failing) throw new Error('the clock failed');
      return clock.now();
    },
    advance: (by: { seconds: number }) => clock.advance(by),
    reset: () => clock.reset(),
  };
  return wrapped;
}

const clock = failingClock();
const emulator = useTestEmulator({ clock });
const INTERNAL = {
  isSuccess: false,
  errorCode: 'internal_error',
  message: 'The emulator could not answer this request.',
};

describe('a service call whose handling rejects', () => {
  it('a status read and a create answer 500 in the service error shape, and the next calls are served', async () => {
    const created = await newSession(emulator.url, WEB_CLIENT);
    clock.failing = true;
    try {
      const read = await readSession(emulator.url, WEB_CLIENT, created.sessionId);
      expect([read.status, read.body]).toEqual([500, INTERNAL]);
      const create = await createSession(emulator.url, WEB_CLIENT, sessionBody(WEB_CLIENT));
      expect([create.status, create.body]).toEqual([500, INTERNAL]);
    } finally {
      clock.failing = false;
    }
    expect((await readSession(emulator.url, WEB_CLIENT, created.sessionId)).body).toMatchObject({ status: 'pending' });
    expect((await newSession(emulator.url, WEB_CLIENT)).sessionId).toEqual(expect.any(String));
  });
});
