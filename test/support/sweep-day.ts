/**
 * A simulated day of sweeps on the test clock, as the read-schedule suites run it: attempts made
 * due 3 minutes after they start, the default schedule's read ages, and a sweep run at each next
 * time an attempt is due until the attempts' day is over.
 */
import { randomBytes } from 'node:crypto';
import type { VerifyStore } from '../../middleware/store/types.ts';
import { ACTION } from './sweep-bench.ts';

export const MIN = 60_000;

/** The default schedule's read ages of an attempt nobody finishes (read-schedule.test.ts proves them the kit's). */
export const READ_AGES = [3, 4.5, 6.5, 9, 12, 16, 22, 30, 45, 75, 120, 210, 360, 600, 960, 24 * 60 - 1].map(
  (m) => m * MIN,
);

/** Stores a pending attempt of `sessionId`, first due 3 minutes after `createdAt`; resolves with its state. */
export async function insertDueAttempt(
  store: Pick<VerifyStore<unknown>, 'insertAttempt'>,
  sessionId: string,
  createdAt: number,
  overrides: { action?: string; state?: string } = {},
): Promise<string> {
  const state = overrides.state ?? randomBytes(16).toString('base64url');
  await store.insertAttempt({
    destination: '+15550100001',
    userRef: `user-${sessionId}`,
    state,
    platform: 'web',
    sessionId,
    action: overrides.action ?? ACTION,
    params: {},
    returnTo: '/done',
    sensitivity: 'normal',
    createdAt,
    nextCheckAt: createdAt + 3 * MIN,
  });
  return state;
}

/**
 * Runs `sweep` at each next time an attempt is due (`nextDue`, the clock set by `setNow`) until
 * none is due before `end`, at most `most` runs: a schedule needs a few dozen, a read every few
 * seconds would need thousands, so a run-away schedule ends the loop and fails the test's reads.
 */
export async function sweepEachDueTime(day: {
  nextDue: () => Promise<number>;
  end: number;
  setNow: (now: number) => void;
  sweep: () => Promise<unknown>;
  most: number;
}): Promise<void> {
  for (let runs = 0; runs < day.most; runs++) {
    const due = await day.nextDue();
    if (due >= day.end) return;
    day.setNow(due);
    await day.sweep();
  }
}
