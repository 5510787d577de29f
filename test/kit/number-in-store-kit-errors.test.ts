/**
 * A store of the app's own is the integrator's code: a KitError it throws is in its own words and
 * may name the user's number ("no row for +447400123456"). The start's and the sweep's log lines
 * have the number masked, as any other error of the integrator's code.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { KitError, KitErrorCode, type ActionDefinition } from '../../middleware/index.ts';
import type { VerifyStore } from '../../middleware/store/types.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

const TYPED = '+447400123456';

const actions: ActionDefinition<unknown>[] = [
  {
    name: 'add_phone',
    operationSensitivity: 'normal',
    successPath: '/done',
    destination: 'entered',
    proves: 'destination',
    fulfil: () => undefined,
  },
];

/** The store method that throws, naming the number: `pumping.reserveSend` for the nested store's. */
let failing: string | undefined;
const refusal = () => new KitError(KitErrorCode.StoreUnavailable, `no row for ${TYPED}`);

/** The store with `failing` throwing (the nested pumping store's methods too). */
function failingWhenAsked<T extends object>(store: T, prefix = ''): T {
  return new Proxy(store, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      if (key === 'pumping' && typeof value === 'object' && value !== null) return failingWhenAsked(value, 'pumping.');
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (failing === `${prefix}${String(key)}`) return Promise.reject(refusal());
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({
    kit: { actions, pumping: { mode: 'refuse' } },
    wrapStore: (store) => failingWhenAsked(store as VerifyStore<unknown> & object),
  });
});
afterAll(async () => {
  failing = undefined;
  await app?.close();
});

/** The start route's lines with the code store_unavailable. */
function storeErrorLines(): (string | undefined)[] {
  return app.logs
    .map((line) => JSON.parse(line) as { route?: string; code?: string; msg?: string })
    .filter((line) => line.route === 'start' && line.code === 'store_unavailable')
    .map((line) => line.msg);
}

it.each(['insertAttempt', 'pumping.reserveSend'])(
  "a KitError of the app's own store (%s) naming the typed number: the start's line has it masked",
  async (method) => {
    failing = method;
    const before = storeErrorLines().length;
    const user = await app.agent().signIn(`someone-${method}`);
    const answer = await user.tryStartWithNumber('add_phone', '+44 7400 123456');
    failing = undefined;
    expect(answer.status).toBe(503);
    expect(await answer.text()).not.toContain(TYPED);
    expect(storeErrorLines().slice(before)).toEqual(['no row for ••\u00a056']);
    for (const line of app.logs) expect(line).not.toContain(TYPED.slice(3));
  },
);

it("a KitError of the app's own store in a sweep worker's run: logged with the number masked", async () => {
  failing = 'claimDueAttempts';
  const failed = () => app.logs.filter((line) => line.includes('sweep run failed'));
  const worker = app.kit.startSweepWorker({ intervalMs: 60_000 });
  try {
    await expect.poll(() => failed().length).toBeGreaterThan(0);
  } finally {
    await worker.stop();
    failing = undefined;
  }
  expect((JSON.parse(failed()[0]!) as { err?: { message?: string } }).err?.message).toBe('no row for ••\u00a056');
  for (const line of app.logs) expect(line).not.toContain(TYPED.slice(3));
});

it("a KitError of the app's own store counting a verified text at the landing: logged with the number masked", async () => {
  const user = await app.agent().signIn('verified-count');
  const started = await user.startWithNumber('add_phone', '+44 7400 123456');
  const location = await user.verifyOnHostedPage(started);
  failing = 'pumping.markVerified';
  const logged = app.logs.length;
  try {
    expect((await user.request(location)).status).toBeLessThan(500);
  } finally {
    failing = undefined;
  }
  const lines = app.logs
    .slice(logged)
    .map((line) => JSON.parse(line) as { msg?: string; err?: { message?: string } })
    .filter((line) => line.msg === 'could not count a verified text for the SMS pumping rules');
  expect(lines.map((line) => line.err?.message)).toEqual(['no row for ••\u00a056']);
  for (const line of app.logs) expect(line).not.toContain(TYPED.slice(3));
});
