/**
 * A user may have LIVE_INTENTS_PER_USER kept requests at once. A kept form confirmed after its grant
 * aged out is kept anew in place of the old one: that adds none, so a user at the limit is asked
 * again (never a 429), the old one is used up, and the count stays within the limit; a genuinely
 * new request beyond it is still refused and nothing already kept is lost. On SQLite and PostgreSQL.
 */

/** The user's kept requests still waiting (unconsumed) and those used up. */
async function intentsOf(app: TestApp, userRef: string): Promise<{ live: string[]; consumed: string[] }> {
  const rows = await app.query<{ intent_id: string; consumed_at: unknown }>(
    'SELECT intent_id, consumed_at FROM verify_kit_intents WHERE user_ref = $1',
    [userRef],
  );
  return {
    live: rows.filter((r) => r.consumed_at === null).map((r) => r.intent_id),
    consumed: rows.filter((r) => r.consumed_at !== null).map((r) => r.intent_id),
  };
}

const intentOnPage = (html: string) => /name="_verify_kit_intent" value="([^"]+)"/.exec(html)![1]!;
import express from 'express';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LIVE_INTENTS_PER_USER } from '../../middleware/step-up/intent-limit.ts';
import type { Agent } from '../support/agent.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { confirmForm, guardedRoutes, SCOPES, useStepUpApp, withStepUp, type Ran } from '../support/step-up.ts';

describeEachAppStore('a kept form kept anew by a user at the limit of kept requests', (_store, storeOptions) => {
  const suite = useStepUpApp(storeOptions);

  /** "Text me a code" on a guard's page and the code entered: the landing's answer. */
  async function verifyFrom(user: Agent, html: string) {
    const form = confirmForm(html);
    const started = await user.start(form.action, { intent: form.intent });
    return user.request(await user.verifyOnHostedPage(started));
  }

  it(`a user with ${LIVE_INTENTS_PER_USER} kept forms confirming one too late is asked again, not refused; it replaces the old one, and a new one is still refused`, async () => {
    const user = await suite.app.agent().signIn('full-replaces');
    const userRef = 'user-full-replaces';
    const sameSite = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
    const pages: string[] = [];
    for (let i = 0; i < LIVE_INTENTS_PER_USER; i++) {
      pages.push((await user.postForm(`/accounts/acct-${i}/payee`, { iban: `FULL-${i}` }, sameSite)).body);
    }
    const kept = pages.map((page) => confirmForm(page).intent);
    const first = await user.postForm('/accounts/acct-0/payee', { iban: 'FULL-0' }, sameSite);
    expect(first.status).toBe(429);
    // The code for the first one took longer than the payout guard's 300 s (within the kept form's 15 minutes).
    const started = await user.start(confirmForm(pages[0]!).action, { intent: kept[0]! });
    await suite.app.clock.shifted(301_000, async () => {
      const landing = await user.request(await user.verifyOnHostedPage(started));
      const confirmPage = await user.request(landing.location!);
      expect(intentOnPage(confirmPage.body)).toBe(kept[0]);
      const confirmFirst = () =>
        user.postForm('/accounts/acct-0/payee', { _csrf: user.csrf, _verify_kit_intent: kept[0]! }, sameSite);
      const askedAgain = await confirmFirst();
      expect(askedAgain.status).toBe(403);
      expect(askedAgain.body).toContain('Confirm it’s you');
      const replacement = confirmForm(askedAgain.body).intent;
      const afterReplace = await intentsOf(suite.app, userRef);
      expect(afterReplace.live.sort()).toEqual([...kept.slice(1), replacement].sort());
      expect(afterReplace.consumed).toEqual([kept[0]]);

      // A genuinely new one is still one too many: refused, nothing kept, nothing lost.
      const more = await user.postForm('/accounts/acct-more/payee', { iban: 'ONE-TOO-MANY' }, sameSite);
      expect(more.status).toBe(429);
      expect((await intentsOf(suite.app, userRef)).live.sort()).toEqual(afterReplace.live);

      // The replacement runs once, with the form's fields, after a verification in time.
      const second = intentOnPage((await user.request((await verifyFrom(user, askedAgain.body)).location!)).body);
      expect(second).toBe(replacement);
      const ran = await user.postForm(
        '/accounts/acct-0/payee',
        { _csrf: user.csrf, _verify_kit_intent: second },
        sameSite,
      );
      expect(ran.body).toContain('payee saved');
      expect(suite.ran.filter((r) => r.user === 'full-replaces')).toEqual([
        { route: 'payee', user: 'full-replaces', fields: { iban: 'FULL-0' } },
      ]);
      expect((await confirmFirst()).status).toBe(409);
    });
  });
});

/**
 * A replacement is kept with room for one more, as the one it replaces is used up right after: when
 * the store fails to use that one up, the replacement is used up instead, so the user never holds
 * both, and the kept form is still there to confirm once the store answers.
 */
describeEachAppStore('a kept form kept anew when the store fails to use up the old one', (_store, storeOptions) => {
  const failing = new Set<string>();
  const ran: Ran[] = [];
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      wrapStore: (store) =>
        withStepUp(store, (real) => ({
          consumeIntent: async (id, now) => {
            if (failing.has(id)) throw new Error('the database went away');
            return real.consumeIntent(id, now);
          },
        })),
      kit: { scopes: [...SCOPES] },
      ownRoutes: guardedRoutes(ran),
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('the replacement is used up, the old one stays kept, and it is asked again once the store answers', async () => {
    const user = await app.agent().signIn('replace-fails');
    const sameSite = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
    const page = (await user.postForm('/accounts/acct-f/payee', { iban: 'FAIL-1' }, sameSite)).body;
    const kept = confirmForm(page).intent;
    const started = await user.start(confirmForm(page).action, { intent: kept });
    await app.clock.shifted(301_000, async () => {
      const landing = await user.request(await user.verifyOnHostedPage(started));
      await user.request(landing.location!);
      const confirm = () =>
        user.postForm('/accounts/acct-f/payee', { _csrf: user.csrf, _verify_kit_intent: kept }, sameSite);
      failing.add(kept);
      expect((await confirm()).status).toBe(500);
      await expect.poll(async () => (await intentsOf(app, 'user-replace-fails')).live).toEqual([kept]);
      failing.clear();
      const askedAgain = await confirm();
      expect(askedAgain.status).toBe(403);
      const { live, consumed } = await intentsOf(app, 'user-replace-fails');
      expect(live).toEqual([confirmForm(askedAgain.body).intent]);
      expect(consumed).toContain(kept);
    });
    expect(ran).toEqual([]);
  });
});

/** The payee route with its guard made anew for each request (its maxAge read per request, say). */
function payeeGuardedPerRequest(ran: Ran[]) {
  return (app: express.Express, kit: TestApp['kit']) => {
    const guardNow = () =>
      kit.requireRecentVerification({ scope: 'payout', maxAge: 300, bindTo: (req) => String(req.params.account) });
    app.post(
      '/accounts/:account/payee',
      express.urlencoded({ extended: false }),
      (req, res, next) => guardNow()(req, res, next),
      (req, res) => {
        ran.push({ route: 'payee', user: 'per-request', fields: { ...(req.body as Record<string, unknown>) } });
        res.type('html').send('<!doctype html><title>Saved</title><h1 id="saved">payee saved</h1>');
      },
    );
  };
}

/**
 * A user at the limit whose kept form is kept anew while the store fails twice in a row (using up
 * the old one, then the replacement, which nobody was shown): once the store answers again, the
 * kept form is asked again, never refused as one too many, and the user holds the limit, not one
 * more; also when the app makes the route's guard anew for each request.
 */
for (const [how, routes] of [
  ['made once', guardedRoutes],
  ['made for each request', payeeGuardedPerRequest],
] as const) {
  describeEachAppStore(
    `a kept form kept anew at the limit while the store fails twice in a row (its guard ${how})`,
    (_store, storeOptions) => {
      let failing = false;
      const ran: Ran[] = [];
      let app: TestApp;
      beforeAll(async () => {
        app = await startTestApp({
          ...(await storeOptions()),
          wrapStore: (store) =>
            withStepUp(store, (real) => ({
              consumeIntent: async (id, now) => {
                if (failing) throw new Error('the database went away');
                return real.consumeIntent(id, now);
              },
            })),
          kit: { scopes: [...SCOPES] },
          ownRoutes: routes(ran),
        });
      });
      afterAll(async () => {
        await app?.close();
      });

      it(`is asked again once the store answers, and the user holds ${LIVE_INTENTS_PER_USER} kept requests`, async () => {
        const user = await app.agent().signIn('replace-fails-twice');
        const sameSite = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
        const pages: string[] = [];
        for (let i = 0; i < LIVE_INTENTS_PER_USER; i++) {
          pages.push((await user.postForm(`/accounts/acct-${i}/payee`, { iban: `TWICE-${i}` }, sameSite)).body);
        }
        const kept = confirmForm(pages[0]!).intent;
        const started = await user.start(confirmForm(pages[0]!).action, { intent: kept });
        await app.clock.shifted(301_000, async () => {
          const landing = await user.request(await user.verifyOnHostedPage(started));
          await user.request(landing.location!);
          const confirm = () =>
            user.postForm('/accounts/acct-0/payee', { _csrf: user.csrf, _verify_kit_intent: kept }, sameSite);
          failing = true;
          expect((await confirm()).status).toBe(500);
          failing = false;
          const askedAgain = await confirm();
          expect(askedAgain.status).toBe(403);
          expect(askedAgain.body).toContain('Confirm it’s you');
          const { live, consumed } = await intentsOf(app, 'user-replace-fails-twice');
          expect(live.length).toBe(LIVE_INTENTS_PER_USER);
          expect(live).toContain(confirmForm(askedAgain.body).intent);
          expect(consumed).toContain(kept);
        });
        expect(ran).toEqual([]);
      });
    },
  );
}
