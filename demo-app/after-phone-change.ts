/**
 * What the docs advise after a changed number, done by the demo: the user's step-up grants end
 * once the change is committed, since a grant earned on the old number must not outlive it.
 */
import type { OutcomeEvent, OutcomeHook, VerificationKit } from 'hosted-sms-verify-kit';
import { CHANGE_PHONE } from './domain.ts';

/**
 * The outcome hook, then the grants' end for a fulfilled phone change. A revocation that fails
 * throws, so the kit delivers the event again (the outbox keeps one email per event id).
 */
export function endGrantsAfterPhoneChange(
  onOutcome: OutcomeHook,
  kit: () => Pick<VerificationKit<unknown>, 'grants'>,
): (event: OutcomeEvent) => Promise<void> {
  return async (event) => {
    await onOutcome(event);
    if (event.outcome === 'fulfilled' && event.action === CHANGE_PHONE) {
      await kit().grants.revoke({ userRef: event.userRef });
    }
  };
}
