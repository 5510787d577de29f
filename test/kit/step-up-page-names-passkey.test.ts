/**
 * The step-up page says only what the hosted page may ask: it also takes a passkey the user set up
 * there (the service enrols passkeys per userRef), so a page that says the user confirms "with a
 * code we text" alone tells a passkey user something untrue. The kit's English page and the demo's
 * translated pages name the passkey beside the texted code.
 */
import { expect, it } from 'vitest';
import { demoKitMessages } from '../../demo-app/i18n/kit-messages.ts';
import { completeMessages, englishMessages } from '../../middleware/pages/messages.ts';

const NAMES_PASSKEY = /passkey|clé d[’']accès/i;

it("the step-up page's text names the passkey beside the texted code, in the kit's English and each demo language", () => {
  const texts: Record<string, string> = { kit: englishMessages.stepUp.text('•••• 11') };
  for (const [lang, messages] of Object.entries(demoKitMessages))
    texts[lang] = completeMessages(lang, messages).stepUp.text('•••• 11');
  const silent = Object.entries(texts).filter(([, text]) => !NAMES_PASSKEY.test(text));
  expect(Object.keys(texts).length).toBeGreaterThanOrEqual(2);
  expect(silent).toEqual([]);
});
