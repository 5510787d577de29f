/**
 * How many guarded requests one user may have kept at once. Each kept form may be 64 KB, so
 * without a cap one signed-in user (or a script on a same-site page) could store any amount.
 * Beyond it the request is refused and nothing is stored; none of the kept ones is dropped.
 */
import { KitError, KitErrorCode } from '../errors.ts';
import type { NewStepUpIntent, StepUpStore } from '../store/types.ts';
import { INTENT_TTL_MS } from './scope-actions.ts';
import { unreadableStoreAnswer } from './store-answers.ts';

/** Far more than a user confirms at once (a few tabs), and at most about 1.3 MB of kept forms per user. */
export const LIVE_INTENTS_PER_USER = 20;

/** Stores `intent`, or refuses it with 429 while its user has LIVE_INTENTS_PER_USER live intents. */
export async function keepIntentWithinLimit(stepUp: StepUpStore, intent: NewStepUpIntent): Promise<void> {
  const kept: unknown = await stepUp.insertIntent(intent, LIVE_INTENTS_PER_USER);
  if (kept === true) return;
  // Anything else might be a kept request or one refused at the limit: neither is a 429 to the user.
  if (kept !== false) {
    throw unreadableStoreAnswer(
      'stepUp.insertIntent returned',
      kept,
      'true (kept) or false (refused at the limit)',
      'whether the request was kept is unknown, so nothing was offered to confirm or sent',
    );
  }
  throw new KitError(
    KitErrorCode.RateLimited,
    `This user already has ${LIVE_INTENTS_PER_USER} requests waiting to be confirmed; nothing was kept.`,
    // At most this long until the oldest of them expires.
    { retryAfterSeconds: INTENT_TTL_MS / 1000 },
  );
}
