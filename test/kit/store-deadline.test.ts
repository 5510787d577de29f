/**
 * The kit's store is the integrator's code, outside the kit's trust for liveness: a store call of
 * the start or the landing that never settles (a store of the app's own, a pool with no free
 * connection) answers the user 503 `store_unavailable` within `hookTimeouts.store` (a fulfilment's
 * transaction within that plus `hookTimeouts.fulfil`) instead of holding the request open for
 * good, logs which call it was, and loses nothing: once the store answers again the same landing
 * fulfils. On SQLite and PostgreSQL.
 */
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { englishMessages } from '../../middleware/pages/messages.ts';
import type { VerifyStore } from '../../middleware/index.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { watchUnhandledRejections } from '../support/unhandled.ts';

const STORE_MS = 300;
const FULFIL_MS = 300;
/** Long enough for the deadline and a loaded machine, far short of a request held open for good. */
const ANSWERED_WITHIN_MS = 5_000;
const unhandled = watchUnhandledRejections();

/**
 * The store's methods named in `hanging` never settle while they are named there; those named in
 * `late` run `LATE_MS` late, then do their work (a write that commits after the answer gave up).
 */
function hangable(store: VerifyStore<unknown>, hanging: Set<string>, late: Set<string>): VerifyStore<unknown> {
  return new Proxy(store, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      const call = (args: unknown[]) => (value as (...a: unknown[]) => unknown).apply(target, args);
      return (...args: unknown[]) => {
        if (hanging.has(String(key))) return new Promise(() => {});
        if (!late.has(String(key))) return call(args);
        const done = new Promise((resolve) => setTimeout(resolve, LATE_MS)).then(() => call(args));
        lateWrites.push(done);
        return done;
      };
    },
  });
}
const LATE_MS = STORE_MS + FULFIL_MS + 300;
const lateWrites: Promise<unknown>[] = [];

describeEachAppStore('a kit store that stops answering a request', (_store, storeOptions) => {
  const hanging = new Set<string>();
  const late = new Set<string>();
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      wrapStore: (store) => hangable(store, hanging, late),
      kit: { hookTimeouts: { store: STORE_MS, fulfil: FULFIL_MS } },
    });
  });
  afterEach(async () => {
    hanging.clear();
    late.clear();
    expect(await unhandled.settled()).toEqual([]);
  });
  afterAll(async () => {
    await app?.close();
  });

  function expectStoreUnavailable(answer: { status: number; body: string }): void {
    expect(answer.status).toBe(503);
    expect(answer.body).toContain(englishMessages.errors.store_unavailable);
    expect(answer.body).not.toMatch(/\n\s+at [^\n]+:\d+:\d+/);
  }

  it('the landing: a lookup that never settles is answered 503 within hookTimeouts.store; the landing fulfils once the store answers', async () => {
    const user = await app.agent().signIn('store-hangs-landing');
    const started = await user.start('grant');
    const location = await user.verifyOnHostedPage(started);
    hanging.add('findAttemptByState');
    const landed = await user.request(location, { timeoutMs: ANSWERED_WITHIN_MS });
    expectStoreUnavailable(landed);
    expect(app.logs.some((line) => line.includes('store.findAttemptByState did not answer within 300 ms'))).toBe(true);
    hanging.clear();
    expect((await user.request(location)).status).toBe(303);
    expect((await app.attempt(started.sessionId))?.outcome).toBe('fulfilled');
  });

  it("the landing: a fulfilment's transaction that never settles is answered 503 within hookTimeouts.store plus fulfil", async () => {
    const user = await app.agent().signIn('store-hangs-fulfil');
    const started = await user.start('grant');
    const location = await user.verifyOnHostedPage(started);
    hanging.add('fulfilBatch');
    const landed = await user.request(location, { timeoutMs: ANSWERED_WITHIN_MS });
    expectStoreUnavailable(landed);
    expect(landed.ms).toBeGreaterThanOrEqual(STORE_MS + FULFIL_MS - 50);
    hanging.clear();
    expect((await user.request(location)).status).toBe(303);
    expect((await app.attempt(started.sessionId))?.outcome).toBe('fulfilled');
  });

  it("the landing: a fulfilment committed after its 503 is the user's first on the next arrival, then a replay", async () => {
    const user = await app.agent().signIn('store-late-fulfil');
    const started = await user.start('grant');
    const location = await user.verifyOnHostedPage(started);
    late.add('fulfilBatch');
    expectStoreUnavailable(await user.request(location, { timeoutMs: ANSWERED_WITHIN_MS }));
    late.clear();
    await Promise.all(lateWrites.splice(0));
    expect((await app.attempt(started.sessionId))?.outcome).toBe('fulfilled');
    const landed = async () => JSON.parse((await user.request('/test/landed')).body) as { landed: unknown };
    expect((await user.request(location)).status).toBe(303);
    expect(await landed()).toEqual({ landed: { sessionId: started.sessionId, action: 'grant', fulfilment: 'first' } });
    expect((await user.request(location)).status).toBe(303);
    expect(await landed()).toEqual({ landed: { sessionId: started.sessionId, action: 'grant', fulfilment: 'replay' } });
  });

  it("the start: an attempt's insert that never settles is answered 503 within hookTimeouts.store", async () => {
    const user = await app.agent().signIn('store-hangs-start');
    hanging.add('insertAttempt');
    const answer = await user.postStart({ _csrf: user.csrf, action: 'grant' }, {}, ANSWERED_WITHIN_MS);
    expectStoreUnavailable(answer);
    hanging.clear();
    expect((await user.tryStart('grant')).status).toBe(200);
  });
});
