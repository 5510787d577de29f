/**
 * How many guarded requests one user may have kept at once. Each kept form may be 64 KB, so
 * without a cap one signed-in user (or a script on a same-site page) could store any amount.
 * Beyond it the request is refused and nothing is stored; none of the kept ones is dropped.
 */
import { KitError, KitErrorCode } from '../errors.ts';
import { showWithText } from '../routes/answer-error.ts';
import type { NewStepUpIntent, StepUpStore } from '../store/types.ts';
import { isStateShaped } from '../routes/state.ts';
import { consumeKeptIntent, findKeptIntent, INTENT_TTL_MS } from './scope-actions.ts';
import { unreadableStoreAnswer } from './store-answers.ts';

/** Far more than a user confirms at once (a few tabs), and at most about 1.3 MB of kept forms per user. */
export const LIVE_INTENTS_PER_USER = 20;

/**
 * Stores `intent`, or refuses it with 429 while its user has LIVE_INTENTS_PER_USER live intents.
 * One `replacing` a live one of theirs adds none: it has room for one more, as the one it replaces
 * is used up right after (replaceKept), so a user at the limit is not refused a request already kept.
 */
export async function keepIntentWithinLimit(
  stepUp: StepUpStore,
  intent: NewStepUpIntent,
  replacing = false,
): Promise<void> {
  await retireLeftovers(stepUp, intent.userRef, intent.createdAt);
  const kept: unknown = await stepUp.insertIntent(intent, LIVE_INTENTS_PER_USER + (replacing ? 1 : 0));
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
  throw limitReached();
}

/**
 * Keeps a page's `intent` (method GET): the one already kept for the same page renewed instead (a
 * reload, a link opened twice, tabs restored at once), so a page holds one intent. Its id.
 */
export async function keepPageWithinLimit(stepUp: StepUpStore, intent: NewStepUpIntent): Promise<string> {
  await retireLeftovers(stepUp, intent.userRef, intent.createdAt);
  if (typeof stepUp.keepPageIntent !== 'function') {
    const renewed: unknown = await stepUp.renewPageIntent({ ...intent, now: intent.createdAt });
    // Only an id as the kit makes them: a custom store's `null` for "none renewed" would be the page's intent.
    if (isStateShaped(renewed)) return renewed;
    await keepIntentWithinLimit(stepUp, intent);
    return intent.intentId;
  }
  const kept: unknown = await stepUp.keepPageIntent(intent, LIVE_INTENTS_PER_USER);
  if (isStateShaped(kept)) return kept;
  if (kept === false) throw limitReached();
  throw unreadableStoreAnswer(
    'stepUp.keepPageIntent returned',
    kept,
    'the id of the intent kept or false (refused at the limit)',
    'whether the request was kept is unknown, so nothing was offered to confirm or sent',
  );
}

function limitReached(): KitError {
  return new KitError(
    KitErrorCode.RateLimited,
    `This user already has ${LIVE_INTENTS_PER_USER} requests waiting to be confirmed; nothing was kept.`,
    // At most this long until the oldest of them expires.
    { retryAfterSeconds: INTENT_TTL_MS / 1000 },
  );
}

/**
 * Keeps `replacement` in place of the kept request `replaced`: true when that one was still unused
 * (it is used up now), false when it was not (nothing is kept). In one transaction when the store
 * can (replaceIntent): replacements sent at once by a user at the limit then each find room.
 */
export async function keepInPlaceOf(stepUp: StepUpStore, replacement: NewStepUpIntent, replaced: string) {
  if (typeof stepUp.replaceIntent !== 'function') {
    await keepIntentWithinLimit(stepUp, replacement, true);
    return replaceKept(stepUp, replaced, replacement);
  }
  const answer: unknown = await stepUp.replaceIntent(replacement, replaced, LIVE_INTENTS_PER_USER);
  if (answer === 'replaced' || answer === 'used') return answer === 'replaced';
  if (answer === 'refused') throw limitReached();
  throw unreadableStoreAnswer(
    'stepUp.replaceIntent returned',
    answer,
    "'replaced', 'used' or 'refused'",
    'whether the request was kept is unknown, so nothing was offered to confirm or sent',
  );
}

/**
 * Uses up the kept request `replaced` now that `replacement` was kept in its place: true when it
 * was still unused. Otherwise, or when the store fails, the replacement is used up too, so the user
 * never holds both (it was kept with room for one more).
 */
async function replaceKept(stepUp: StepUpStore, replaced: string, replacement: NewStepUpIntent): Promise<boolean> {
  let used: unknown;
  try {
    used = await consumeKeptIntent(stepUp, replaced, replacement.createdAt);
  } catch (error) {
    await retire(stepUp, replacement);
    throw error;
  }
  if (used === undefined) await retire(stepUp, replacement);
  return used !== undefined;
}

/**
 * Replacements no one was shown that the store failed to use up (its second failure in a row), by
 * kit's store and user: still live, each would hold its user one over the limit, and refuse their
 * kept forms as one too many, until it expired. Used up before that user's next keep on this instance.
 */
const leftovers = new WeakMap<StepUpStore, Map<string, Set<string>>>();
/** Users with leftovers remembered per store: past it, a leftover is left to expire (15 minutes). */
const LEFTOVER_USERS = 1000;

/** Uses up `replacement`, never shown to anyone; remembered as a leftover when the store fails. */
async function retire(stepUp: StepUpStore, replacement: NewStepUpIntent): Promise<void> {
  try {
    await stepUp.consumeIntent(replacement.intentId, replacement.createdAt);
  } catch {
    const byUser = leftovers.get(stepUp) ?? new Map<string, Set<string>>();
    leftovers.set(stepUp, byUser);
    const ids = byUser.get(replacement.userRef) ?? new Set<string>();
    if (byUser.size < LEFTOVER_USERS || byUser.has(replacement.userRef)) {
      byUser.set(replacement.userRef, ids.add(replacement.intentId));
    }
  }
}

/** Uses up the user's leftovers before a keep counts their live requests; one the store fails again stays. */
async function retireLeftovers(stepUp: StepUpStore, userRef: string, now: number): Promise<void> {
  const ids = leftovers.get(stepUp)?.get(userRef);
  if (ids === undefined) return;
  for (const id of ids) {
    try {
      await stepUp.consumeIntent(id, now);
      ids.delete(id);
    } catch {
      return;
    }
  }
  leftovers.get(stepUp)?.delete(userRef);
}

/**
 * Why the kept request `replaced` could not be kept anew: it may have expired since the guard
 * checked it, or another tab sent it at the same moment, where it was kept anew (or ran). One that
 * never ran here must not be said to have been carried out: the user is told where it went.
 */
export async function replacedUnusable(stepUp: StepUpStore, replaced: string): Promise<KitError> {
  const intent = await findKeptIntent(stepUp, replaced);
  if (intent !== undefined && intent.consumedAt !== null) {
    const sentElsewhere = new KitError(
      KitErrorCode.StepUpIntentUnusable,
      'This request was sent from another tab or window at the same moment, and kept anew or carried out there; nothing changed here.',
    );
    return showWithText(sentElsewhere, 'step_up_intent_sent_elsewhere');
  }
  const why =
    intent === undefined ? 'This request can no longer be used' : 'This request expired before it was confirmed';
  return new KitError(KitErrorCode.StepUpIntentUnusable, `${why}; nothing changed.`);
}
