/**
 * A custom store's step-up `listGrants` that applies only part of the guard's query (a data layer
 * that reads a browser session's grants by its digest alone): the guard checks every grant it
 * reads again, so another user's grant in the same browser session never opens a guarded route.
 */
import { expect, it } from 'vitest';
import type { StepUpGrant, StepUpStore, VerifyStore } from '../../middleware/store/types.ts';
import type { Agent } from '../support/agent.ts';
import { startTestApp } from '../support/app.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { confirmForm, guardedRoutes, SCOPES, type Ran } from '../support/step-up.ts';
import { USERS } from '../support/users.ts';

/** The real store, its listGrants answering every user's grants of the query's browser session. */
function ignoringUser(store: VerifyStore<unknown>): VerifyStore<unknown> {
  const real = store.stepUp!;
  const users = Object.values(USERS).map((user) => user.userRef);
  const stepUp: StepUpStore = {
    insertGrant: (grant) => real.insertGrant(grant),
    async listGrants(query) {
      const grants: StepUpGrant[] = [];
      for (const userRef of users) grants.push(...(await real.listGrants({ ...query, userRef })));
      return grants;
    },
    revokeGrants: (query) => real.revokeGrants(query),
    insertIntent: (intent, maxLive) => real.insertIntent(intent, maxLive),
    renewPageIntent: (query) => real.renewPageIntent(query),
    findIntent: (id) => real.findIntent(id),
    consumeIntent: (id, now) => real.consumeIntent(id, now),
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

describeEachAppStore('a custom step-up store whose listGrants leaves out the user', (_store, storeOptions) => {
  /** "Text me a code" on a guard's page, the code entered; the landing's answer. */
  async function verifyFrom(user: Agent, html: string) {
    const form = confirmForm(html);
    const started = await user.start(form.action, { intent: form.intent });
    return user.request(await user.verifyOnHostedPage(started));
  }

  it('another user signed in in the same browser session is asked to confirm it’s them: the previous user’s grant opens nothing', async () => {
    const ran: Ran[] = [];
    const app = await startTestApp({
      ...(await storeOptions()),
      kit: { scopes: [...SCOPES] },
      ownRoutes: guardedRoutes(ran),
      wrapStore: ignoringUser,
    });
    try {
      const browser = await app.agent().signIn('alice');
      await verifyFrom(browser, (await browser.request('/security')).body);
      expect((await browser.request('/security')).body).toContain('codes for alice');
      // Bob signs in in the same browser, on an app that keeps the session id at sign-in.
      await browser.signIn('bob');
      const asBob = await browser.request('/security');
      expect(asBob.body).toContain('Confirm it’s you');
      expect(asBob.body).not.toContain('codes for bob');
      expect(ran.filter((r) => r.user === 'bob')).toEqual([]);
    } finally {
      await app.close();
    }
  });
});
