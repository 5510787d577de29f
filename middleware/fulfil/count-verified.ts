/**
 * The SMS pumping counters' side of a verified read: the text counted verified under its send's
 * keys and hour. Shared by a first read and a read of an attempt already fulfilled; the sweep
 * counts those whose count failed.
 */
import { DEFAULT_HOOK_TIMEOUTS, withDeadline } from '../deadline.ts';
import { describeError, lateRejectionLogger, markingErrors } from '../logger.ts';
import type { FulfilContext } from '../context.ts';
import type { Attempt } from '../store/types.ts';

/** With the rules off nothing was counted at the start either: nothing to count, nothing to wait for. */
export function countsTexts<Tx>(deps: FulfilContext<Tx>): boolean {
  return deps.pumping?.mode !== 'off' && deps.store.pumping !== undefined;
}

/**
 * The text reached its owner: the SMS pumping counters count it verified (once, whoever reads it
 * first). A count that fails, or is late (hookTimeouts.limits, as the start's own pumping writes),
 * is only logged: the fulfilment does not wait on the counters. True when the store answered.
 */
export async function countVerifiedText<Tx>(deps: FulfilContext<Tx>, attempt: Attempt): Promise<boolean> {
  const ms = deps.hookTimeouts?.limits ?? DEFAULT_HOOK_TIMEOUTS.limits;
  const late = () => new Error(`counting the verified text did not settle within ${ms} ms`);
  try {
    // A KitError of a store of the app's own is in its words (it may name the number): logged masked.
    const count = () => markingErrors(() => deps.store.pumping?.markVerified(attempt.sessionId));
    await withDeadline('limits', ms, count, {
      late,
      onLateRejection: deps.logger && lateRejectionLogger(deps.logger),
    });
    return true;
  } catch (error) {
    deps.logger?.warn(
      { sessionId: attempt.sessionId, err: describeError(error) },
      'could not count a verified text for the SMS pumping rules',
    );
    return false;
  }
}

/** How far back the sweep looks for a fulfilled attempt whose count failed: past what the hourly rules read. */
export const RECOUNT_WINDOW_MS = 2 * 3_600_000;
const RECOUNT_BATCH = 200;

/**
 * The sweep's repair: a text whose count failed when its attempt was fulfilled (a store error at
 * the landing, the mobile completion or the sweep), and whose user never came back, is counted
 * verified now, once. Under hookTimeouts.limits, and `withinMs` when shorter (what is left of the
 * sweep run's time; none left, it is not asked); a failure is only logged. A later run counts
 * what this one did not. Returns how many.
 */
export async function countFulfilledTexts<Tx>(deps: FulfilContext<Tx>, withinMs = Infinity): Promise<number> {
  const count = deps.store.pumping?.countFulfilledSends?.bind(deps.store.pumping);
  if (deps.pumping?.mode === 'off' || count === undefined) return 0;
  const ms = Math.min(deps.hookTimeouts?.limits ?? DEFAULT_HOOK_TIMEOUTS.limits, withinMs);
  if (ms <= 0) {
    deps.logger?.info(
      {},
      'no time was left in the sweep run to count the verified texts of fulfilled attempts; a later run counts them',
    );
    return 0;
  }
  const query = { since: deps.now() - RECOUNT_WINDOW_MS, limit: RECOUNT_BATCH };
  try {
    const counted = await withDeadline('limits', ms, () => markingErrors(() => count(query)), {
      late: () => new Error(`counting the verified texts of fulfilled attempts did not settle within ${ms} ms`),
      onLateRejection: deps.logger && lateRejectionLogger(deps.logger),
    });
    return typeof counted === 'number' ? counted : 0;
  } catch (error) {
    deps.logger?.warn(
      { err: describeError(error) },
      'could not count the verified texts of fulfilled attempts for the SMS pumping rules',
    );
    return 0;
  }
}
