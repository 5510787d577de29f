/** One NewAttempt for store tests: the n-th of a user's payout changes; override what a test is about. */
import type { NewAttempt } from '../../middleware/store/types.ts';

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
