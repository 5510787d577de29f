/**
 * A landing answered 503 because the fulfilment's transaction came back after `hookTimeouts.store`
 * may still commit, so the user's next arrival is told 'first'. A store of the app's own (or an
 * action) may throw a KitError `store_unavailable` of its own: nothing committed, and it is a
 * failure like any other, so a fulfilment the sweep runs afterwards reaches that user as a replay.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { contextOf } from '../../middleware/create-kit.ts';
import { KitError, KitErrorCode, type VerifyStore } from '../../middleware/index.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

let refuseOnce = false;
function refusingFulfil(store: VerifyStore<unknown>): VerifyStore<unknown> {
  return new Proxy(store, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (key === 'fulfilBatch' && refuseOnce) {
          refuseOnce = false;
          throw new KitError(KitErrorCode.StoreUnavailable, 'the ledger database is down');
        }
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ wrapStore: refusingFulfil });
});
afterAll(async () => {
  await app?.close();
});

it("a store_unavailable the app's own store threw is no late commit: the sweep's fulfilment is the user's replay", async () => {
  const user = await app.agent().signIn('own-store-unavailable');
  const started = await user.start('grant');
  const location = await user.verifyOnHostedPage(started);
  refuseOnce = true;
  expect((await user.request(location)).status).toBe(503);
  expect((await app.attempt(started.sessionId))?.outcome).toBe('pending');
  await runSweep({ ...contextOf(app.kit), now: () => Date.now() + 10 * 60_000 });
  expect((await app.attempt(started.sessionId))?.outcome).toBe('fulfilled');
  expect((await user.request(location)).status).toBe(303);
  const landed = JSON.parse((await user.request('/test/landed')).body) as { landed: unknown };
  expect(landed).toEqual({ landed: { sessionId: started.sessionId, action: 'grant', fulfilment: 'replay' } });
});
