/**
 * A custom store's step-up answers that are not quite the contract's: a `listGrants` that applies
 * only part of the guard's query (a data layer that reads a browser session's grants by its digest
 * alone), and a `findIntent` that gives a kept form's fields back as the JSON text it stored. The
 * guard checks every grant it reads again, so another user's grant in the same browser session never
 * opens a guarded route, and it runs a kept form only with fields: never a handler with a text.
 */
import { expect, it } from 'vitest';
import type { StepUpGrant, VerifyStore } from '../../middleware/store/types.ts';
import type { Agent } from '../support/agent.ts';
import { startTestApp } from '../support/app.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { confirmForm, guardedRoutes, SCOPES, withStepUp, type Ran } from '../support/step-up.ts';
import { USERS } from '../support/users.ts';

/** Its listGrants answering every user's grants of the query's browser session. */
function ignoringUser(store: VerifyStore<unknown>): VerifyStore<unknown> {
  const users = Object.values(USERS).map((user) => user.userRef);
  return withStepUp(store, (real) => ({
    async listGrants(query) {
      const grants: StepUpGrant[] = [];
      for (const userRef of users) grants.push(...(await real.listGrants({ ...query, userRef })));
      return grants;
    },
  }));
}

/** Its findIntent answering a kept form's fields as the JSON text a TEXT column holds. */
function fieldsAsText(store: VerifyStore<unknown>): VerifyStore<unknown> {
  return withStepUp(store, (real) => ({
    async findIntent(id) {
      const intent = await real.findIntent(id);
      return intent === undefined ? undefined : { ...intent, fields: JSON.stringify(intent.fields) };
    },
  }));
}

describeEachAppStore('a custom step-up store', (_store, storeOptions) => {
  /** "Text me a code" on a guard's page, the code entered; the landing's answer. */
  async function verifyFrom(user: Agent, html: string) {
    const form = confirmForm(html);
    const started = await user.start(form.action, { intent: form.intent });
    return user.request(await user.verifyOnHostedPage(started));
  }

  it('whose listGrants leaves out the user: another user signed in in the same browser session is asked to confirm it’s them: the previous user’s grant opens nothing', async () => {
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

  it('whose findIntent gives a kept form’s fields back as text: the confirmation runs nothing (500, logged), the form stays kept', async () => {
    const ran: Ran[] = [];
    const app = await startTestApp({
      ...(await storeOptions()),
      kit: { scopes: [...SCOPES] },
      ownRoutes: guardedRoutes(ran),
      wrapStore: fieldsAsText,
    });
    try {
      const alice = await app.agent().signIn('alice');
      const sameSite = { origin: alice.origin, 'sec-fetch-site': 'same-origin' };
      const kept = await alice.postForm('/accounts/acct-1/payee', { iban: 'AS-TEXT-1' }, sameSite);
      const confirm = await alice.request((await verifyFrom(alice, kept.body)).location!);
      const intentId = /name="_verify_kit_intent" value="([^"]+)"/.exec(confirm.body)![1]!;
      const sent = await alice.postForm(
        '/accounts/acct-1/payee',
        { _csrf: alice.csrf, _verify_kit_intent: intentId },
        sameSite,
      );
      expect(sent.status).toBe(500);
      expect(ran).toEqual([]);
      expect(
        app.logs.some((line) => line.includes('findIntent answered a kept form whose fields are not an object')),
      ).toBe(true);
      const [row] = await app.query<{ consumed_at: unknown }>(
        'SELECT consumed_at FROM verify_kit_intents WHERE intent_id = $1',
        [intentId],
      );
      expect(row!.consumed_at).toBeNull();
    } finally {
      await app.close();
    }
  });
});
