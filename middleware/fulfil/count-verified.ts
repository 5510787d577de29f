/**
 * The SMS pumping counters' side of a verified read: the text counted verified under its send's
 * keys and hour. Shared by a first read and a read of an attempt already fulfilled.
 */
import { DEFAULT_HOOK_TIMEOUTS, withDeadline } from '../deadline.ts';
import { describeError, lateRejectionLogger } from '../logger.ts';
import type { FulfilContext } from '../context.ts';
import type { Attempt } from '../store/types.ts';

/**
 * The text reached its owner: the SMS pumping counters count it verified (once, whoever reads it
 * first). A count that fails, or is late (hookTimeouts.limits, as the start's own pumping writes),
 * is only logged: the fulfilment does not wait on the counters.
 */
export async function countVerifiedText<Tx>(deps: FulfilContext<Tx>, attempt: Attempt): Promise<void> {
  const ms = deps.hookTimeouts?.limits ?? DEFAULT_HOOK_TIMEOUTS.limits;
  const late = () => new Error(`counting the verified text did not settle within ${ms} ms`);
  try {
    await withDeadline('limits', ms, () => deps.store.pumping?.markVerified(attempt.sessionId), {
      late,
      onLateRejection: deps.logger && lateRejectionLogger(deps.logger),
    });
  } catch (error) {
    deps.logger?.warn(
      { sessionId: attempt.sessionId, err: describeError(error) },
      'could not count a verified text for the SMS pumping rules',
    );
  }
}
