/** One NewAttempt for store tests: the n-th of a user's payout changes; override what a test is about. */
import type { Attempt, NewAttempt, VerifyStore } from '../../middleware/store/types.ts';

export function newAttempt(n: number, overrides: Partial<NewAttempt> = {}): NewAttempt {
  return {
    state: `state-${n}`,
    sessionId: `session-${n}`,
    userRef: 'user-a',
    action: 'change_payout',
    params: { n },
    destination: '+15550100001',
    returnTo: '/done',
    sensitivity: 'sensitive',
    platform: 'web',
    createdAt: 1_000_000,
    nextCheckAt: 1_000_000,
    ...overrides,
  };
}

/**
 * The attempt as a caller of fulfilOnce holds it: read back from the store (by its session id),
 * or, for a session the store never had, the attempt a caller would have made up.
 */
export async function storedAttempt(
  store: Pick<VerifyStore<unknown>, 'findAttemptBySessionId'>,
  sessionId: string,
): Promise<Attempt> {
  const stored = await store.findAttemptBySessionId(sessionId);
  if (stored !== undefined) return stored;
  const made = newAttempt(0, { sessionId, state: `state-of-${sessionId}` });
  return {
    ...made,
    serviceUserRef: made.serviceUserRef ?? null,
    startSeq: 0,
    outcome: 'pending',
    failureReason: null,
    fulfilledAt: null,
    finishedAt: null,
    sweepChecks: 0,
    supersededBy: null,
  };
}
