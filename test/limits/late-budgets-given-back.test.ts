/**
 * A start whose budgets the store counts only after `hookTimeouts.limits` is refused at the
 * deadline (500, nothing sent): what it spent when the count lands is given back, so a store slow
 * for a moment (a flood of starts, a failover) does not leave its users locked out by starts that
 * texted nothing. On SQLite and PostgreSQL.
 */
import { expect, it } from 'vitest';
import type { StartBudgetCounter, VerifyStore } from '../../middleware/store/types.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp } from '../support/app.ts';
import { GENEROUS_START_LIMITS } from '../support/limits.ts';
import { newSeen } from '../support/seen.ts';
import { waitFor } from '../support/wait-for.ts';

const DEADLINE_MS = 200;

/**
 * The store, its budgets counted only once `late` resolves while `slow()` says so (the test resolves
 * it after the start was refused: past the deadline, by no sleep); `counted` tells each count that landed.
 */
function slowBudgets(
  store: VerifyStore<unknown>,
  slow: () => boolean,
  late: Promise<void>,
  counted: () => void,
): VerifyStore<unknown> {
  const counter = store as VerifyStore<unknown> & StartBudgetCounter;
  return new Proxy(counter, {
    get(target, name) {
      if (name === 'consumeStartBudgets') {
        return async (query: Parameters<StartBudgetCounter['consumeStartBudgets']>[0]) => {
          if (slow()) await late;
          const refusals = await target.consumeStartBudgets(query);
          counted();
          return refusals;
        };
      }
      const value: unknown = Reflect.get(target, name, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describeEachAppStore('a start whose budgets are counted after their deadline', (_store, storeOptions) => {
  it('is refused at the deadline, and what it spent is given back once counted: the same user starts again', async () => {
    let slow = true;
    let landed = 0;
    let deadlinePassed = () => {};
    const late = new Promise<void>((resolve) => (deadlinePassed = resolve));
    const app = await startTestApp({
      ...(await storeOptions()),
      wrapStore: (store) =>
        slowBudgets(
          store,
          () => slow,
          late,
          () => (landed += 1),
        ),
      kit: {
        limits: { ...GENEROUS_START_LIMITS, perUser: { points: 1, durationSeconds: 3600 } },
        hookTimeouts: { limits: DEADLINE_MS },
      },
    });
    try {
      const alice = await app.agent(newSeen()).signIn('alice');
      expect((await alice.tryStart('grant_badge', {}, 5_000)).status).toBe(500);
      deadlinePassed();
      await waitFor(() => landed === 1, 5_000, 'the late count of the budgets');
      slow = false;
      // The give-back follows the late count; the next start may meet it just before or after.
      await waitFor(
        async () => {
          const answer = await alice.tryStart('grant_badge');
          if (answer.status !== 429) expect(answer.status).toBe(200);
          return answer.status === 200;
        },
        3_000,
        'a start of the same user to be allowed again',
      );
      expect((await app.emulator.control.stats()).smsSent).toBe(1);
    } finally {
      await app.close();
    }
  });
});
