/**
 * The kit's confirmation page of a form kept at `path` (English), rendered alone: what the masking
 * tests read for a number the path holds.
 */
import { englishMessages } from '../../middleware/pages/messages.ts';
import { stepUpConfirmPage } from '../../middleware/pages/step-up-pages.ts';

export function confirmPageFor(path: string): string {
  return stepUpConfirmPage(
    {
      method: 'POST',
      path,
      label: undefined,
      csrfToken: 'csrf',
      intentField: 'intent',
      intentId: 'intent-1',
      methodOverride: undefined,
      verified: true,
    },
    'nonce',
    englishMessages,
  );
}
