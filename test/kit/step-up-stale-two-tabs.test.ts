/**
 * One kept form confirmed from two tabs at once, each too late for its grant: one tab is asked to
 * confirm it's the user again (the form kept anew there), the other runs nothing and is told the
 * truth, that the form was already sent from another tab, never that it was carried out, in
 * English and in French. On SQLite and PostgreSQL, both tabs read the kept form before either keeps it anew.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { demoKitMessages } from '../../demo-app/i18n.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { confirmForm, guardedRoutes, SCOPES, withStepUp, type Ran } from '../support/step-up.ts';

describeEachAppStore('a stale kept form confirmed from two tabs at once', (_store, storeOptions) => {
  const ran: Ran[] = [];
  let app: TestApp;
  /** Replacements held until this many have arrived: the two tabs' confirmations overlap. */
  let holdUntil = 0;
  let arrived = 0;
  let releaseAll: () => void = () => {};
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      wrapStore: (store) =>
        withStepUp(store, (real) => ({
          replaceIntent: async (replacement, replacedId, maxLive) => {
            arrived += 1;
            if (arrived < holdUntil) {
              await new Promise<void>((resolve) => {
                releaseAll = resolve;
                setTimeout(resolve, 5_000);
              });
            } else releaseAll();
            return real.replaceIntent!(replacement, replacedId, maxLive);
          },
        })),
      kit: { scopes: [...SCOPES], messages: { fr: demoKitMessages.fr } },
      ownRoutes: guardedRoutes(ran),
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  for (const [lang, told, notTold] of [
    ['en', 'already sent from another tab', /already carried out/],
    ['fr', 'déjà été envoyée depuis un autre onglet', /déjà été effectuée/],
  ] as const) {
    it(`tells the tab that lost the race that the form was sent from another tab, not carried out (${lang})`, async () => {
      const who = `two-tabs-${lang}`;
      const user = await app.agent().signIn(who);
      const headers = { origin: user.origin, 'sec-fetch-site': 'same-origin', 'accept-language': lang };
      const kept = confirmForm((await user.postForm('/accounts/acct-t/payee', { iban: 'TABS-1' }, headers)).body);
      // No grant for acct-t: each confirmation is too late, and keeps the form anew in place of the old.
      [holdUntil, arrived] = [2, 0];
      const logged = app.logs.length;
      const confirm = () =>
        user.postForm('/accounts/acct-t/payee', { _csrf: user.csrf, _verify_kit_intent: kept.intent }, headers);
      const answers = await Promise.all([confirm(), confirm()]);
      holdUntil = 0;
      const askedAgain = answers.filter((answer) => answer.status === 200);
      const refused = answers.filter((answer) => answer.status === 409);
      expect(askedAgain).toHaveLength(1);
      expect(refused).toHaveLength(1);
      const lines = app.logs.slice(logged).filter((line) => line.includes('step_up_intent_unusable'));
      expect(lines).toHaveLength(1);
      expect(lines.join('\n')).not.toContain('already carried out');
      expect(refused[0]!.body).not.toMatch(notTold);
      expect(refused[0]!.body).toContain(told);
      expect(ran.filter((r) => r.user === who)).toEqual([]);
    });
  }
});
