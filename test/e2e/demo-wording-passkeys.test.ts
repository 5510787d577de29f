/**
 * The demo says only what a verification proves: it runs on the emulator with passkeys on, and the
 * hosted page may take the user's passkey instead of the texted code for the payout change and the
 * Security page's step-up (they prove the user). Its pages said these were confirmed by an SMS code
 * alone ("Applied only after you confirm with an SMS code", and the French): each text that names
 * SMS as what confirms names the passkey too.
 */
import { expect, it } from 'vitest';
import { createDemoActions } from '../../demo-app/actions.ts';
import { CHANGE_PAYOUT } from '../../demo-app/domain.ts';
import { DEMO_TEXTS } from '../../demo-app/i18n.ts';

/** Says that a code sent by SMS (and nothing else) is what confirms. */
const SMS_ONLY = /SMS/i;
const NAMES_PASSKEY = /passkey|clé d[’']accès/i;

it('the demo never tells the user that an action a passkey may confirm is confirmed only by an SMS code', () => {
  // The premise: the payout change proves only the user, so a passkey may confirm it.
  const actions = createDemoActions({} as never, {} as never);
  expect(actions.find((a) => a.name === CHANGE_PAYOUT)?.proves ?? 'user').toBe('user');
  const overstated: string[] = [];
  for (const [lang, t] of Object.entries(DEMO_TEXTS)) {
    const said = {
      'home.lead': t.home.lead,
      'home.accountHint': t.home.accountHint,
      'security.lead': t.security.lead,
    };
    for (const [where, text] of Object.entries(said)) {
      if (SMS_ONLY.test(text) && !NAMES_PASSKEY.test(text)) overstated.push(`${lang} ${where}: ${text}`);
    }
  }
  expect(overstated).toEqual([]);
});
