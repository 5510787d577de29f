/**
 * The step-up store is the integrator's code too, outside the kit's trust for liveness: a call that
 * never settles (a store of the app's own, a pool with no free connection) at a guarded route, the
 * step-up page, the scope's start or the landing that grants answers the user 503
 * `store_unavailable` within `hookTimeouts.store` instead of holding the request open for good,
 * logs which call it was, runs nothing and loses nothing: once the store answers again, the same
 * request goes on. On SQLite and PostgreSQL.
 */
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { englishMessages } from '../../middleware/pages/messages.ts';
import type { StepUpStore, VerifyStore } from '../../middleware/store/types.ts';
import type { ActionDefinition } from '../../middleware/types.ts';
import type { Agent } from '../support/agent.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { confirmForm, guardedRoutes, SCOPES, type Ran } from '../support/step-up.ts';
import { watchUnhandledRejections } from '../support/unhandled.ts';

const STORE_MS = 300;
/** Long enough for the deadline and a loaded machine, far short of a request held open for good. */
const ANSWERED_WITHIN_MS = 5_000;
const unhandled = watchUnhandledRejections();
/** An action whose start requires a step-up: a start without a grant is kept until the user confirms it. */
const changePhone: ActionDefinition<unknown> = {
  name: 'change_phone',
  operationSensitivity: 'sensitive',
  successPath: '/done/phone',
  destination: 'entered',
  proves: 'destination',
  requireRecentVerification: { scope: 'security', maxAge: 600 },
  fulfil: () => {},
};

/** The store, its step-up methods named in `hanging` never settling while they are named there. */
function hangable(store: VerifyStore<unknown>, hanging: Set<string>): VerifyStore<unknown> {
  const real = store.stepUp!;
  const stepUp = new Proxy(real, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) =>
        hanging.has(String(key)) ? new Promise(() => {}) : (value as (...a: unknown[]) => unknown).apply(target, args);
    },
  }) as StepUpStore;
  return new Proxy(store, {
    get: (target, key) => {
      if (key === 'stepUp') return stepUp;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describeEachAppStore('a step-up store that stops answering a request', (_store, storeOptions) => {
  const hanging = new Set<string>();
  const ran: Ran[] = [];
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      wrapStore: (store) => hangable(store, hanging),
      kit: { actions: [changePhone], scopes: [...SCOPES], hookTimeouts: { store: STORE_MS } },
      ownRoutes: guardedRoutes(ran),
    });
  });
  afterEach(async () => {
    hanging.clear();
    expect(await unhandled.settled()).toEqual([]);
  });
  afterAll(async () => {
    await app?.close();
  });

  function expectStoreUnavailable(answer: { status: number; body: string }, call: string): void {
    expect(answer.status).toBe(503);
    expect(answer.body).toContain(englishMessages.errors.store_unavailable);
    expect(answer.body).not.toMatch(/\n\s+at [^\n]+:\d+:\d+/);
    expect(app.logs.some((line) => line.includes(`stepUp.${call} did not answer within ${STORE_MS} ms`))).toBe(true);
  }

  /** "Text me a code" on a guard's page, the code entered: the landing's URL. */
  async function verifiedLanding(user: Agent, html: string): Promise<string> {
    const form = confirmForm(html);
    const started = await user.start(form.action, { intent: form.intent });
    return user.verifyOnHostedPage(started);
  }

  it('a guarded page: a grant lookup that never settles is answered 503 within hookTimeouts.store; the page asks once the store answers', async () => {
    const user = await app.agent().signIn('step-up-store-hangs-page');
    hanging.add('listGrants');
    expectStoreUnavailable(await user.request('/security', { timeoutMs: ANSWERED_WITHIN_MS }), 'listGrants');
    hanging.clear();
    expect((await user.request('/security')).body).toContain('Confirm it’s you');
  });

  it('a kept form: a keep, and then a confirmation’s lookup, that never settle are answered 503 and run nothing; the form then runs once', async () => {
    const user = await app.agent().signIn('step-up-store-hangs-form');
    const sameSite = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
    hanging.add('insertIntent');
    const keep = () => user.postForm('/accounts/acct-h/payee', { iban: 'HANG-1' }, sameSite, ANSWERED_WITHIN_MS);
    expectStoreUnavailable(await keep(), 'insertIntent');
    hanging.clear();
    const kept = await keep();
    const confirmPage = await user.request(
      await user.request(await verifiedLanding(user, kept.body)).then((l) => l.location!),
    );
    const intentId = /name="_verify_kit_intent" value="([^"]+)"/.exec(confirmPage.body)![1]!;
    const confirm = () =>
      user.postForm(
        '/accounts/acct-h/payee',
        { _csrf: user.csrf, _verify_kit_intent: intentId },
        sameSite,
        ANSWERED_WITHIN_MS,
      );
    hanging.add('findIntent');
    expectStoreUnavailable(await confirm(), 'findIntent');
    expect(ran.filter((r) => r.user === 'step-up-store-hangs-form')).toEqual([]);
    hanging.clear();
    expect((await confirm()).body).toContain('payee saved');
    expect(ran.filter((r) => r.user === 'step-up-store-hangs-form')).toHaveLength(1);
  });

  it('the step-up page and the scope’s start: an intent lookup that never settles is answered 503, nothing texted', async () => {
    const user = await app.agent().signIn('step-up-store-hangs-start');
    const page = await user.request('/security');
    const form = confirmForm(page.body);
    const texts = (await app.emulator.control.outbox()).length;
    hanging.add('findIntent');
    expectStoreUnavailable(
      await user.postStart({ _csrf: user.csrf, action: form.action, intent: form.intent }, {}, ANSWERED_WITHIN_MS),
      'findIntent',
    );
    expectStoreUnavailable(
      await user.request(`/verify/step-up?intent=${form.intent}`, { timeoutMs: ANSWERED_WITHIN_MS }),
      'findIntent',
    );
    expect((await app.emulator.control.outbox()).length).toBe(texts);
  });

  it('a kept start: its confirmation’s intent lookup that never settles is answered 503, nothing texted', async () => {
    const user = await app.agent().signIn('step-up-store-hangs-kept-start');
    const kept = await user.tryStart('change_phone', { phone: '+33612345678' });
    const form = confirmForm(kept.body);
    const texts = (await app.emulator.control.outbox()).length;
    hanging.add('findIntent');
    expectStoreUnavailable(
      await user.postStart({ _csrf: user.csrf, _verify_kit_intent: form.intent }, {}, ANSWERED_WITHIN_MS),
      'findIntent',
    );
    expect((await app.emulator.control.outbox()).length).toBe(texts);
  });

  it('the landing: a grant’s write that never settles is answered 503 within hookTimeouts.store; the landing grants once the store answers', async () => {
    const user = await app.agent().signIn('step-up-store-hangs-landing');
    const location = await verifiedLanding(user, (await user.request('/security')).body);
    hanging.add('insertGrant');
    expectStoreUnavailable(await user.request(location, { timeoutMs: ANSWERED_WITHIN_MS }), 'insertGrant');
    hanging.clear();
    expect((await user.request(location)).status).toBe(303);
    expect((await user.request('/security')).body).toContain('codes for step-up-store-hangs-landing');
  });
});
