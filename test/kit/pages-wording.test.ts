/**
 * Pages say what happened in the words people use: a kept request that was already run (a replayed
 * confirmation) is not titled as a failure, and a number is shown by its last two digits.
 */
import { describe, expect, it } from 'vitest';
import { maskDestination } from '../../middleware/attempts.ts';
import { completeMessages, englishMessages } from '../../middleware/pages/messages.ts';
import { defaultPages } from '../../middleware/pages/pages.ts';
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
    expect(englishMessages.stepUp.text(maskDestination('+15550100001'))).toContain('your number ••\u00a001.');
  });
});
