/**
 * Pages say what happened in the words people use: a kept request that was already run (a replayed
 * confirmation) is not titled as a failure, and a number is shown by its last two digits, also
 * one in the path of a kept request the confirmation page names.
 */
import { describe, expect, it } from 'vitest';
import { maskDestination } from '../../middleware/attempts.ts';
import { completeMessages, englishMessages } from '../../middleware/pages/messages.ts';
import { defaultPages } from '../../middleware/pages/pages.ts';
import { stepUpConfirmPage } from '../../middleware/pages/step-up-pages.ts';
import { demoKitMessages } from '../../demo-app/i18n/kit-messages.ts';

const titleOf = (page: string) => /<title>([^<]*)<\/title>/.exec(page)?.[1];

describe('the page of a kept request that can no longer be used', () => {
  for (const [lang, messages] of [
    ['en', englishMessages],
    ['fr (the demo)', completeMessages('fr', demoKitMessages.fr)],
  ] as const) {
    it(`${lang}: titled as a settled request, not as something that went wrong`, () => {
      const page = defaultPages.error(
        { status: 409, code: 'step_up_intent_unusable', message: messages.errors.step_up_intent_unusable },
        'nonce',
        messages,
      );
      expect(titleOf(page)).toBe(messages.stepUp.unusableTitle);
      expect(page).toContain(`<h1>${messages.stepUp.unusableTitle}</h1>`);
      expect(page).not.toContain(messages.error.heading);
    });
  }

  it('any other error keeps the error title', () => {
    const page = defaultPages.error({ status: 400, code: 'csrf_failed', message: 'x' }, 'nonce', englishMessages);
    expect(titleOf(page)).toBe(englishMessages.error.title);
  });
});

describe('a masked number', () => {
  it('reads as its last two digits, the way people read a number they know', () => {
    expect(maskDestination('+15550100001')).toBe('••\u00a001');
    expect(englishMessages.stepUp.text(maskDestination('+15550100001'))).toContain('your number ••\u00a001,');
  });
});

describe('the confirmation of a kept request whose path holds a phone number', () => {
  const kept = {
    method: 'POST',
    path: '/phones/+447700900123/remove',
    csrfToken: 'csrf',
    intentField: 'intent',
    intentId: 'intent-1',
    methodOverride: undefined,
    verified: true,
  };
  for (const [lang, messages] of [
    ['en', englishMessages],
    ['fr (the demo)', completeMessages('fr', demoKitMessages.fr)],
  ] as const) {
    it(`${lang}: names the path with the number masked, with or without a label for the scope`, () => {
      for (const label of [undefined, 'remove a phone number']) {
        const page = stepUpConfirmPage({ ...kept, label }, 'nonce', messages);
        const shown = page.replace(/<form[^>]*>/, '');
        expect(shown).not.toMatch(/447700900123/);
        expect(page).toContain('<code>POST /phones/••\u00a023/remove</code>');
      }
      const unlabelled = stepUpConfirmPage({ ...kept, label: undefined }, 'nonce', messages);
      expect(unlabelled).toContain(messages.stepUp.confirmText('/phones/••\u00a023/remove'));
      // Before any verification for the form, the same page claims none.
      const unverified = stepUpConfirmPage({ ...kept, label: undefined, verified: false }, 'nonce', messages);
      expect(unverified).toContain(messages.stepUp.confirmPrompt('/phones/••\u00a023/remove'));
      expect(unverified).not.toContain(messages.stepUp.confirmText('/phones/••\u00a023/remove'));
    });
  }
});
