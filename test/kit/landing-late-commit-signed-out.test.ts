/**
 * A landing whose fulfilment's transaction did not answer within its deadline (answered 503, it may
 * still commit) remembers, in the user's session, that the next arrival is their first sight of
 * it. When the user signed out while that landing worked, the session is destroyed in its store:
 * nothing is written into it, as saved it would sign them in again.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { VerifyStore } from '../../middleware/index.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { waitFor } from '../support/wait-for.ts';

/** fulfilBatch never settles while `hanging` is set: a transaction past its deadline. */
let hanging = false;
function hangingFulfil(store: VerifyStore<unknown>): VerifyStore<unknown> {
  return new Proxy(store, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) =>
        key === 'fulfilBatch' && hanging
          ? new Promise(() => {})
          : (value as (...a: unknown[]) => unknown).apply(target, args);
    },
  });
}

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({
    wrapStore: hangingFulfil,
    kit: { hookTimeouts: { store: 300, fulfil: 300 } },
    ownRoutes: (routes) => {
      routes.post('/own/sign-out', (req, res) => req.session.destroy(() => res.json({ signedOut: true })));
      routes.get('/own/who', (req, res) => res.json({ user: (req.session as { user?: string }).user ?? null }));
    },
  });
});
afterAll(async () => {
  await app?.close();
});

it('a sign-out while the landing waited on a late fulfilment stays signed out', async () => {
  const user = await app.agent().signIn('signed-out-during-late-commit');
  const started = await user.start('grant');
  const location = await user.verifyOnHostedPage(started);
  const { control } = app.emulator;
  const readsBefore = (await control.stats()).statusReads;
  await control.injectFaults({ statusDelayMs: 500 });
  hanging = true;
  let landed;
  try {
    const landing = user.request(location);
    await waitFor(async () => (await control.stats()).statusReads > readsBefore, 5_000, 'the landing’s read');
    expect((await user.request('/own/sign-out', { method: 'POST' })).status).toBe(200);
    landed = await landing;
  } finally {
    hanging = false;
    await control.injectFaults({ statusDelayMs: 0 });
  }
  expect(landed.status).toBe(503);
  expect(JSON.parse((await user.request('/own/who')).body)).toEqual({ user: null });
});
