/**
 * A landing that re-checks a pending attempt reads it again from the store, and fulfils only the
 * attempt its link names: a store of the app's own that answers the link's state with another
 * attempt on the re-read (a cache keyed wrongly, a replica mixing rows) gets the session mismatch
 * the first read gets, and the other attempt is neither read nor fulfilled through this link.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { withMethodReplaced } from '../support/replaced-method.ts';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
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

  // The first read of the link's state answers its own attempt (pending); every later one, bob's.
  const findAttemptByState = app.store.findAttemptByState.bind(app.store);
  let linkReads = 0;
  const mixingUp = (state: string) => {
    if (state !== pendingAttempt.state) return findAttemptByState(state);
    linkReads++;
    return findAttemptByState(linkReads > 1 ? otherAttempt.state : state);
  };
  const landing = await withMethodReplaced(app.store, 'findAttemptByState', mixingUp, () =>
    alice.landFor(pendingAttempt.sessionId, pendingAttempt.state),
  );

  expect(linkReads).toBeGreaterThan(1);
  expect(landing.status).toBe(400);
  expect(app.grants(otherAttempt.sessionId)).toBe(0);
  expect((await app.attempt(otherAttempt.sessionId))?.outcome).toBe('pending');
  expect(app.grants(pendingAttempt.sessionId)).toBe(0);
});
