/**
 * A landing that re-checks a pending attempt reads it again from the store, and fulfils only the
 * attempt its link names: a store of the app's own that answers the link's state with another
 * attempt on the re-read (a cache keyed wrongly, a replica mixing rows) gets the session mismatch
 * the first read gets, and the other attempt is neither read nor fulfilled through this link.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { VerifyStore } from '../../middleware/index.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

/** After `mixUpAfter` reads of `linkState`, the store answers it with `otherState`'s attempt. */
const mixUp = { linkState: '', otherState: '', readsBefore: 0, mixUpAfter: 1 };

function mixingStore(store: VerifyStore<unknown>): VerifyStore<unknown> {
  return new Proxy(store, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (key === 'findAttemptByState' && args[0] === mixUp.linkState && mixUp.linkState !== '') {
          mixUp.readsBefore++;
          if (mixUp.readsBefore > mixUp.mixUpAfter) return target.findAttemptByState(mixUp.otherState);
        }
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ wrapStore: mixingStore });
});
afterAll(async () => {
  await app?.close();
});

it("a pending landing's re-check fulfils nothing when the store answers its state with another attempt", async () => {
  const alice = await app.agent().signIn('alice-recheck');
  await alice.start('grant');
  const pendingAttempt = await app.latestAttempt();
  const bob = await app.agent().signIn('bob-recheck');
  await bob.start('grant');
  const otherAttempt = await app.latestAttempt();
  expect(otherAttempt.sessionId).not.toBe(pendingAttempt.sessionId);
  await app.emulator.control.complete(otherAttempt.sessionId, { outcome: 'verified' });
  Object.assign(mixUp, { linkState: pendingAttempt.state, otherState: otherAttempt.state, readsBefore: 0 });

  const landing = await alice.landFor(pendingAttempt.sessionId, pendingAttempt.state);

  // The first read was the link's own attempt (pending); the re-check's was not.
  expect(mixUp.readsBefore).toBeGreaterThan(1);
  expect(landing.status).toBe(400);
  expect(landing.headers.get('x-verify-kit-outcome')).not.toBe('fulfilled');
  expect(app.grants(otherAttempt.sessionId)).toBe(0);
  expect((await app.attempt(otherAttempt.sessionId))?.outcome).toBe('pending');
  expect(app.grants(pendingAttempt.sessionId)).toBe(0);
});
