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
import { confirmForm, guardedRoutes, SCOPES, type Ran } from '../support/step-up.ts';

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
