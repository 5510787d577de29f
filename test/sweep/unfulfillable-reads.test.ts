/**
 * The sweep spends no status read on an attempt no read could fulfil, when the read would count
 * nothing either (the SMS pumping rules off): its action proves the destination and it was started
 * without a userRef bound to its number, or its action is no longer registered. Such an attempt is
 * moved on as if read pending, counted as `unfulfillable`, and expires at the 24 h line. With the
 * rules on, a verified read still counts its text, so it is read.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import type { SweepDeps } from '../../middleware/sweep/sweep-report.ts';
import type { ActionDefinition, SessionStatus } from '../../middleware/types.ts';
import { newAttempt } from '../support/attempts.ts';
import { describeEachStore, type StoreUnderTest } from '../support/stores.ts';

const DAY_MS = 24 * 3_600_000;

describeEachStore('the sweep and an attempt no read could fulfil', (kind) => {
  let h: StoreUnderTest;
  beforeEach(async () => {
    h = await kind.open();
  });
  afterEach(async () => {
    await h.dispose();
  });

  /** Sweeps at each of the attempt's due times over its day; the reads made and the effects run. */
  async function sweptDay(actions: ActionDefinition<unknown>[], pumping: 'off' | 'record') {
    let reads = 0;
    const client = {
      async getSession(sessionId: string): Promise<SessionStatus> {
        reads++;
        const stored = await h.store.findAttemptBySessionId(sessionId);
        return { status: 'verified', state: stored!.state, userRef: stored!.serviceUserRef ?? stored!.userRef };
      },
      close: () => Promise.resolve(),
    };
    await h.store.insertAttempt(newAttempt(1, { action: 'confirm_number', serviceUserRef: null }));
    const created = (await h.store.findAttemptByState('state-1'))!;
    let now = created.createdAt;
    const deps = {
      client,
      store: h.store,
      actions: new Map(actions.map((action) => [action.name, action])),
      now: () => now,
      pumping: { mode: pumping },
    } as unknown as SweepDeps<unknown>;
    let unfulfillable = 0;
    for (let run = 0; run < 40; run++) {
      const attempt = (await h.store.findAttemptByState('state-1'))!;
      if (attempt.outcome !== 'pending' || attempt.nextCheckAt >= created.createdAt + DAY_MS) break;
      now = Math.max(now, attempt.nextCheckAt);
      unfulfillable += (await runSweep(deps, { batchSize: 4, concurrency: 1 })).unfulfillable;
    }
    return { reads, unfulfillable, effects: await h.countEffects() };
  }

  const provesTheNumber = (): ActionDefinition<unknown> => ({
    name: 'confirm_number',
    operationSensitivity: 'normal',
    successPath: '/done',
    proves: 'destination',
    fulfil: h.effect('sweep') as unknown as ActionDefinition<unknown>['fulfil'],
  });

  it('started without a userRef bound to its number: never read, its day long', async () => {
    const day = await sweptDay([provesTheNumber()], 'off');
    expect(day).toMatchObject({ reads: 0, effects: 0 });
    expect(day.unfulfillable).toBeGreaterThan(10);
  });

  it('its action no longer registered: never read', async () => {
    expect(await sweptDay([], 'off')).toMatchObject({ reads: 0, effects: 0 });
  });

  it('with the SMS pumping rules on, read: a verified read counts its text', async () => {
    const day = await sweptDay([provesTheNumber()], 'record');
    expect(day.reads).toBeGreaterThan(0);
    expect(day).toMatchObject({ unfulfillable: 0, effects: 0 });
  });
});
