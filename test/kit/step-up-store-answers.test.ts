/**
 * A custom store's step-up methods answering `null` where the contract says `undefined` (an
 * idiom of many JavaScript data layers: `rows[0] ?? null`). The guard counts only the intent
 * itself as an answer: a kept form runs once however two confirmations race (a `null` from
 * consumeIntent means the other one got it), an unknown intent is a 409 (not a 500), and a page's
 * "Confirm it's you" keeps an intent of its own when nothing was renewed.
 */
import { expect, it } from 'vitest';
import type { StepUpStore, VerifyStore } from '../../middleware/store/types.ts';
import type { Agent } from '../support/agent.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { confirmForm, guardedRoutes, SCOPES, withStepUp, type Ran } from '../support/step-up.ts';

/** Holds each consumeIntent until `parties` calls are waiting, so all of them read the intent first. */
function consumeBarrier(parties: number) {
  const waiting: (() => void)[] = [];
  return {
    armed: false,
    async pass(): Promise<void> {
      if (!this.armed) return;
      await new Promise<void>((resolve) => {
        waiting.push(resolve);
        if (waiting.length === parties) waiting.splice(0).forEach((go) => go());
        // Never a hung test: the others go on alone after 3 s.
        setTimeout(resolve, 3_000).unref();
      });
    },
  };
}

/** The real store, its step-up answering `null` for nothing found, nothing renewed, nothing consumed. */
function answeringNull(store: VerifyStore<unknown>, barrier: ReturnType<typeof consumeBarrier>): VerifyStore<unknown> {
  const real = store.stepUp!;
  const stepUp: StepUpStore = {
    insertGrant: (grant) => real.insertGrant(grant),
    listGrants: (query) => real.listGrants(query),
    revokeGrants: (query) => real.revokeGrants(query),
    insertIntent: (intent, maxLive) => real.insertIntent(intent, maxLive),
    renewPageIntent: async (query) => (await real.renewPageIntent(query)) ?? (null as unknown as undefined),
    findIntent: async (id) => (await real.findIntent(id)) ?? (null as unknown as undefined),
    async consumeIntent(id, now) {
      await barrier.pass();
      return (await real.consumeIntent(id, now)) ?? (null as unknown as undefined);
    },
    purgeExpiredIntents: (query) => real.purgeExpiredIntents(query),
  };
  return new Proxy(store, {
    get: (target, key) => {
      if (key === 'stepUp') return stepUp;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describeEachAppStore('a custom step-up store answering null', (_store, storeOptions) => {
  async function appWith(ran: Ran[], barrier: ReturnType<typeof consumeBarrier>): Promise<TestApp> {
    return startTestApp({
      ...(await storeOptions()),
      kit: { scopes: [...SCOPES] },
      ownRoutes: guardedRoutes(ran),
      wrapStore: (store) => answeringNull(store, barrier),
    });
  }

  /** "Text me a code" on a guard's page, the code entered; the landing's answer. */
  async function verifyFrom(user: Agent, html: string) {
    const form = confirmForm(html);
    const started = await user.start(form.action, { intent: form.intent });
    return user.request(await user.verifyOnHostedPage(started));
  }

  it('two confirmations of one kept form at once run the handler once: the other gets 409', async () => {
    const ran: Ran[] = [];
    const barrier = consumeBarrier(2);
    const app = await appWith(ran, barrier);
    try {
      const alice = await app.agent().signIn('alice');
      const sameSite = { origin: alice.origin, 'sec-fetch-site': 'same-origin' };
      const kept = await alice.postForm('/accounts/acct-1/payee', { iban: 'RACE-1' }, sameSite);
      const landing = await verifyFrom(alice, kept.body);
      const confirm = await alice.request(landing.location!);
      const intentId = /name="_verify_kit_intent" value="([^"]+)"/.exec(confirm.body)![1]!;
      const send = () =>
        alice.postForm('/accounts/acct-1/payee', { _csrf: alice.csrf, _verify_kit_intent: intentId }, sameSite);
      barrier.armed = true;
      const answers = await Promise.all([send(), send()]);
      expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
      expect(ran.filter((r) => r.route === 'payee')).toHaveLength(1);
    } finally {
      await app.close();
    }
  });

  it('an intent the store does not know is a 409 that runs nothing, on the guard and on the confirmation page', async () => {
    const ran: Ran[] = [];
    const app = await appWith(ran, consumeBarrier(1));
    try {
      const alice = await app.agent().signIn('alice');
      const unknown = 'A'.repeat(43);
      const confirmation = await alice.request(`/verify/step-up?intent=${unknown}`);
      expect(confirmation.status).toBe(409);
      const posted = await alice.postForm(
        '/accounts/acct-1/payee',
        { _csrf: alice.csrf, _verify_kit_intent: unknown },
        { origin: alice.origin, 'sec-fetch-site': 'same-origin' },
      );
      expect(posted.status).toBe(409);
      expect(ran).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('a page’s "Confirm it’s you" names an intent of its own, and the user verifies and returns to the page', async () => {
    const ran: Ran[] = [];
    const app = await appWith(ran, consumeBarrier(1));
    try {
      const alice = await app.agent().signIn('alice');
      const page = await alice.request('/security?tab=codes');
      expect(confirmForm(page.body).intent).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const landing = await verifyFrom(alice, page.body);
      expect(landing.location).toBe('/security?tab=codes');
      expect((await alice.request(landing.location!)).body).toContain('codes for alice');
    } finally {
      await app.close();
    }
  });
});

/**
 * A custom step-up store answering outside its interface: an unused intent's `consumedAt` as
 * `undefined` (not `null`), `insertIntent` answering nothing, `listGrants` answering `null`. The
 * kit cannot read these safely (an intent that may have been used, a request that may not have been
 * kept, grants it could never find again: asked and texted again and again), so each fails closed:
 * a 500 whose log line names the store method and what it returned, nothing run or texted, never a
 * 409 or 429 that blames the user.
 */
describeEachAppStore('a custom step-up store answering outside its interface', (_store, storeOptions) => {
  async function appWith(ran: Ran[], changed: (real: StepUpStore) => Partial<StepUpStore>): Promise<TestApp> {
    return startTestApp({
      ...(await storeOptions()),
      kit: { scopes: [...SCOPES] },
      ownRoutes: guardedRoutes(ran),
      wrapStore: (store) => withStepUp(store, changed),
    });
  }
  const logged = (app: TestApp, text: string) => app.logs.some((line) => line.includes(text));

  it('an unused intent whose consumedAt comes back undefined: a 500 naming findIntent, no text sent, nothing run', async () => {
    const ran: Ran[] = [];
    const app = await appWith(ran, (real) => ({
      findIntent: async (id) => {
        const intent = await real.findIntent(id);
        return intent === undefined ? undefined : { ...intent, consumedAt: intent.consumedAt ?? undefined! };
      },
    }));
    try {
      const alice = await app.agent().signIn('alice');
      const sameSite = { origin: alice.origin, 'sec-fetch-site': 'same-origin' };
      const kept = await alice.postForm('/accounts/acct-1/payee', { iban: 'UNDEF-1' }, sameSite);
      expect(kept.status).toBe(200);
      const form = confirmForm(kept.body);
      const started = await alice.tryStart(form.action, { intent: form.intent });
      expect(started.status).toBe(500);
      expect(logged(app, 'stepUp.findIntent answered an intent whose consumedAt is undefined')).toBe(true);
      expect(await app.emulator.control.outbox()).toEqual([]);
      expect(ran).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('insertIntent answering nothing: a 500 naming insertIntent, never a 429, and no text sent', async () => {
    const ran: Ran[] = [];
    const app = await appWith(ran, (real) => ({
      insertIntent: async (intent, maxLive) => {
        await real.insertIntent(intent, maxLive);
        return undefined as unknown as boolean;
      },
    }));
    try {
      const alice = await app.agent().signIn('alice');
      const page = await alice.request('/security');
      expect(page.status).toBe(500);
      const json = await alice.request('/export', { headers: { accept: 'application/json' } });
      expect(json.status).toBe(500);
      expect(logged(app, 'stepUp.insertIntent returned undefined')).toBe(true);
      expect(await app.emulator.control.outbox()).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('replaceIntent answering true (as insertIntent would): a 500 naming replaceIntent, never "asked again", nothing run', async () => {
    const ran: Ran[] = [];
    const app = await appWith(ran, (real) => ({
      replaceIntent: async (replacement, replacedId, maxLive) => {
        await real.replaceIntent!(replacement, replacedId, maxLive);
        return true as unknown as 'replaced';
      },
    }));
    try {
      const alice = await app.agent().signIn('alice');
      const sameSite = { origin: alice.origin, 'sec-fetch-site': 'same-origin' };
      const kept = confirmForm((await alice.postForm('/accounts/acct-1/payee', { iban: 'TRUE-1' }, sameSite)).body);
      const confirmed = await alice.postForm(
        '/accounts/acct-1/payee',
        { _csrf: alice.csrf, _verify_kit_intent: kept.intent },
        sameSite,
      );
      expect(confirmed.status).toBe(500);
      expect(logged(app, 'stepUp.replaceIntent returned true')).toBe(true);
      expect(ran).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('keepPageIntent answering true (as insertIntent would): a 500 naming keepPageIntent, no page offering an intent', async () => {
    const ran: Ran[] = [];
    const app = await appWith(ran, (real) => ({
      keepPageIntent: async (intent, maxLive) => {
        await real.keepPageIntent!(intent, maxLive);
        return true as unknown as string;
      },
    }));
    try {
      const alice = await app.agent().signIn('alice');
      const page = await alice.request('/security');
      expect(page.status).toBe(500);
      expect(page.body).not.toContain('Confirm it’s you');
      expect(logged(app, 'stepUp.keepPageIntent returned true')).toBe(true);
      expect(ran).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('listGrants answering null: a 500 naming listGrants, nothing kept and no text sent; kit.grants.list says so too', async () => {
    const ran: Ran[] = [];
    const app = await appWith(ran, () => ({ listGrants: async () => null as unknown as [] }));
    try {
      const alice = await app.agent().signIn('alice');
      const page = await alice.request('/security');
      expect(page.status).toBe(500);
      expect(logged(app, 'stepUp.listGrants returned null')).toBe(true);
      expect(await app.query('SELECT intent_id FROM verify_kit_intents')).toEqual([]);
      expect(await app.emulator.control.outbox()).toEqual([]);
      await expect(app.kit.grants.list({ userRef: 'user-alice' })).rejects.toThrow('stepUp.listGrants returned null');
    } finally {
      await app.close();
    }
  });
});
