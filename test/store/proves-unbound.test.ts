/**
 * An action that proves the destination fulfils only an attempt whose service userRef is bound to
 * the user AND the number. One started while the action proved the user alone (an older
 * deployment, or another kit on the same database) was sent the plain userRef, so a passkey saved
 * for any of the user's numbers may have answered it: its `verified` says nothing of this number.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { FulfilContext } from '../../middleware/context.ts';
import { KitErrorCode } from '../../middleware/errors.ts';
import { completeAttempt } from '../../middleware/fulfil/fulfil.ts';
import type { VerifyStore } from '../../middleware/store/types.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import type { ActionDefinition, SessionStatus } from '../../middleware/types.ts';
import { newAttempt } from '../support/attempts.ts';
import { describeEachStore, type StoreUnderTest } from '../support/stores.ts';

const ACTION = 'confirm_number';

/** The service's answer for an attempt sent the plain userRef: verified, echoing what it was sent. */
function echoingClient(store: VerifyStore<unknown>) {
  return {
    async getSession(sessionId: string): Promise<SessionStatus> {
      const stored = await store.findAttemptBySessionId(sessionId);
      return { status: 'verified', state: stored!.state, userRef: stored!.serviceUserRef ?? stored!.userRef };
    },
  };
}

describeEachStore('an action proving the destination', (kind) => {
  let h: StoreUnderTest;
  beforeEach(async () => {
    h = await kind.open();
  });
  afterEach(async () => {
    await h.dispose();
  });

  const deps = (proves: 'user' | 'destination'): FulfilContext<unknown> => {
    const action: ActionDefinition<unknown> = {
      name: ACTION,
      operationSensitivity: 'normal',
      successPath: '/done',
      proves,
      fulfil: h.effect(proves) as unknown as ActionDefinition<unknown>['fulfil'],
    };
    return {
      client: echoingClient(h.store),
      store: h.store,
      actions: new Map([[ACTION, action]]),
      now: () => 2_000_000,
    };
  };

  it('never fulfils, on a landing or in the sweep, an attempt started without a number-bound userRef', async () => {
    // Started while the action proved the user: no bound ref stored, the plain userRef was sent.
    await h.store.insertAttempt(newAttempt(1, { action: ACTION, serviceUserRef: null }));
    const attempt = (await h.store.findAttemptByState('state-1'))!;

    await expect(completeAttempt(deps('destination'), attempt, 'landing')).rejects.toMatchObject({
      code: KitErrorCode.ServiceResponseMismatch,
    });
    const report = await runSweep(deps('destination'), { batchSize: 4, concurrency: 1 });

    expect(report.fulfilled).toBe(0);
    expect(report.errors).toBe(1);
    expect(await h.countEffects()).toBe(0);
    expect(await h.store.findAttemptByState('state-1')).toMatchObject({ outcome: 'pending' });
  });

  it('still fulfils the attempt for an action proving the user, and a bound one for the destination', async () => {
    await h.store.insertAttempt(newAttempt(1, { action: ACTION, serviceUserRef: null }));
    await h.store.insertAttempt(newAttempt(2, { action: ACTION, userRef: 'user-b', serviceUserRef: 'vkd1_bound' }));

    const plain = await completeAttempt(deps('user'), (await h.store.findAttemptByState('state-1'))!, 'landing');
    const bound = await completeAttempt(deps('destination'), (await h.store.findAttemptByState('state-2'))!, 'landing');

    expect(plain).toMatchObject({ kind: 'fulfilled', firstTime: true });
    expect(bound).toMatchObject({ kind: 'fulfilled', firstTime: true });
    expect(await h.countEffects()).toBe(2);
  });
});
