/**
 * A user at the limit of kept requests who sends several kept forms back at once, each too late for
 * its grant, is asked again for every one (never a 429): each is kept anew in place of its old one,
 * so the user's kept requests stay at the limit. On SQLite and PostgreSQL, whose concurrent requests
 * keep their replacements before any has used up the form it replaces.
 */
import { expect, it } from 'vitest';
import { LIVE_INTENTS_PER_USER } from '../../middleware/step-up/intent-limit.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { confirmForm, useStepUpApp } from '../support/step-up.ts';

const AT_ONCE = 6;

describeEachAppStore('kept forms sent back at once by a user at the limit', (_store, storeOptions) => {
  const suite = useStepUpApp(storeOptions);

  it(`are each asked again, never refused, and the user still holds ${LIVE_INTENTS_PER_USER} kept requests`, async () => {
    const user = await suite.app.agent().signIn('full-at-once');
    const sameSite = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
    const kept: string[] = [];
    for (let i = 0; i < LIVE_INTENTS_PER_USER; i++) {
      const page = await user.postForm('/accounts/acct-0/payee', { iban: `AT-ONCE-${i}` }, sameSite);
      kept.push(confirmForm(page.body).intent);
    }
    // No grant for acct-0: each confirmation is asked again, its form kept anew in place of the old.
    const answers = await Promise.all(
      kept
        .slice(0, AT_ONCE)
        .map((intent) =>
          user.postForm('/accounts/acct-0/payee', { _csrf: user.csrf, _verify_kit_intent: intent }, sameSite),
        ),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(AT_ONCE).fill(200));
    for (const answer of answers) expect(answer.body).toContain('Confirm it’s you');
    const rows = await suite.app.query<{ intent_id: string; consumed_at: unknown }>(
      'SELECT intent_id, consumed_at FROM verify_kit_intents WHERE user_ref = $1',
      ['user-full-at-once'],
    );
    const live = rows.filter((row) => row.consumed_at === null).map((row) => row.intent_id);
    expect(live.length).toBe(LIVE_INTENTS_PER_USER);
    expect(live).not.toContain(kept[0]);
    expect(suite.ran.filter((r) => r.user === 'full-at-once')).toEqual([]);
  });
});
