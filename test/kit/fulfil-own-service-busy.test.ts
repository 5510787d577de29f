/**
 * A landing whose status read the service answered 429 shows the pending page and pauses every
 * sweep process for its Retry-After (the service limits this client's reads). An action's fulfil,
 * or a store of the app's own, may throw a KitError `service_busy` of its own (its ledger is rate
 * limited): the service said nothing, so no sweep is paused, and the sweep fulfils what is due.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { contextOf } from '../../middleware/create-kit.ts';
import { KitError, KitErrorCode, type VerifyStore } from '../../middleware/index.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

let busyOnce = false;
function busyFulfil(store: VerifyStore<unknown>): VerifyStore<unknown> {
  return new Proxy(store, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (key === 'fulfilBatch' && busyOnce) {
          busyOnce = false;
          throw new KitError(KitErrorCode.ServiceBusy, 'the ledger is rate limited', { retryAfterSeconds: 600 });
        }
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ wrapStore: busyFulfil });
});
afterAll(async () => {
  await app?.close();
});

it("an app's own service_busy at the landing pauses no sweep: the sweep fulfils the attempt", async () => {
  const user = await app.agent().signIn('own-service-busy');
  const started = await user.start('grant');
  const location = await user.verifyOnHostedPage(started);
  busyOnce = true;
  await user.request(location);
  expect((await app.attempt(started.sessionId))?.outcome).toBe('pending');
  const report = await runSweep({ ...contextOf(app.kit), now: () => Date.now() + 10 * 60_000 }, { timeBudgetMs: 2000 });
  expect(report).toMatchObject({ reads: 1, fulfilled: 1 });
  expect((await app.attempt(started.sessionId))?.outcome).toBe('fulfilled');
});
