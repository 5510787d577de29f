/**
 * A start the service refused busy (429) created no session and sent no text, so its budgets are
 * given back. Once the service created the session, the text is on its way: a store of the app's
 * own that then fails to keep the attempt with a KitError `service_busy` (or a 4xx
 * `service_rejected`) of its own is no such refusal, and the start stays counted: the user's
 * budget of one start is spent, and the next start is refused without a second text.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { KitError, KitErrorCode, type VerifyStore } from '../../middleware/index.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

let failInsert: KitError | undefined;
function failingInsert(store: VerifyStore<unknown>): VerifyStore<unknown> {
  return new Proxy(store, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const failure = failInsert;
        if (key === 'insertAttempt' && failure !== undefined) {
          failInsert = undefined;
          return Promise.reject(failure);
        }
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({
    wrapStore: failingInsert,
    kit: { limits: { perUser: { points: 1, durationSeconds: 600 } } },
  });
});
afterAll(async () => {
  await app?.close();
});

it.each([
  ['service_busy', () => new KitError(KitErrorCode.ServiceBusy, 'the ledger is busy', { retryAfterSeconds: 5 })],
  [
    'service_rejected 400',
    () => new KitError(KitErrorCode.ServiceRejected, 'the ledger refused it', { serviceStatus: 400 }),
  ],
])(
  "the app's store failing to keep a created attempt with its own %s: the start stays counted",
  async (_code, failure) => {
    const user = await app.agent().signIn(`insert-${_code.replace(/\W/g, '-')}`);
    const textsBefore = (await app.emulator.control.stats()).creates;
    failInsert = failure();
    const first = await user.tryStart('grant_badge');
    expect(first.status).not.toBe(200);
    expect((await app.emulator.control.stats()).creates).toBe(textsBefore + 1);
    const second = await user.tryStart('grant_badge');
    expect(second.status).toBe(429);
    expect((await app.emulator.control.stats()).creates).toBe(textsBefore + 1);
  },
);
