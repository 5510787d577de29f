/** A new attempt as the sweep suites store it before its first read. */
import type { NewAttempt } from '../../middleware/store/attempt-types.ts';

type Given = Pick<NewAttempt, 'action' | 'sessionId' | 'state' | 'userRef' | 'destination' | 'platform'>;

/** `attempt` without params, of normal sensitivity, landing on '/done', created now and due now. */
export function dueAttempt(attempt: Given): NewAttempt {
  const now = Date.now();
  return { ...attempt, params: {}, returnTo: '/done', sensitivity: 'normal', createdAt: now, nextCheckAt: now };
}
