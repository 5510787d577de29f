/**
 * A kept form sent back too late for its grant is asked again, kept anew in place of the old one.
 * The guard reads what it needs before it keeps anything: when the store fails a read, the user
 * gets the error and the old kept form is still there to confirm, not used up for a new one nobody
 * was shown. On SQLite and PostgreSQL, with the stores' own replaceIntent.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { confirmForm, guardedRoutes, SCOPES, withStepUp, type Ran } from '../support/step-up.ts';

describeEachAppStore('a kept form asked again while the store fails a read', (_store, storeOptions) => {
  let failing = false;
  const ran: Ran[] = [];
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      wrapStore: (store) =>
        withStepUp(store, (real) => ({
          replaceIntent: (replacement, replacedId, maxLive) => real.replaceIntent!(replacement, replacedId, maxLive),
          // The guard's read of the grants too old to open the request (no age bound), failing.
          listGrants: async (query) => {
            const tooOldRead = 'browserSession' in query && query.startedSince === undefined;
            if (failing && tooOldRead) throw new Error('the database went away');
            return real.listGrants(query);
          },
        })),
      kit: { scopes: [...SCOPES] },
      ownRoutes: guardedRoutes(ran),
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('leaves the old kept form usable, and it is asked again once the store answers', async () => {
    const user = await app.agent().signIn('read-fails');
    const sameSite = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
    const page = (await user.postForm('/accounts/acct-r/payee', { iban: 'READ-1' }, sameSite)).body;
    const kept = confirmForm(page).intent;
    const started = await user.start(confirmForm(page).action, { intent: kept });
    await app.clock.shifted(301_000, async () => {
      const landing = await user.request(await user.verifyOnHostedPage(started));
      await user.request(landing.location!);
      const confirm = () =>
        user.postForm('/accounts/acct-r/payee', { _csrf: user.csrf, _verify_kit_intent: kept }, sameSite);
      failing = true;
      expect((await confirm()).status).toBe(500);
      failing = false;
      const askedAgain = await confirm();
      expect(askedAgain.status).toBe(403);
      expect(askedAgain.body).toContain('Confirm it’s you');
      const rows = await app.query<{ intent_id: string; consumed_at: unknown }>(
        'SELECT intent_id, consumed_at FROM verify_kit_intents WHERE user_ref = $1',
        ['user-read-fails'],
      );
      const live = rows.filter((row) => row.consumed_at === null).map((row) => row.intent_id);
      expect(live).toEqual([confirmForm(askedAgain.body).intent]);
    });
    expect(ran).toEqual([]);
  });
});
