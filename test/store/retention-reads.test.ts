/**
 * The store's support-screen reads and its retention, through the store interface only, on SQLite
 * and on PostgreSQL: settled attempts lose their params and destination after one period and are
 * deleted after a longer one, in batches; pending attempts and attempts whose outcome event is not
 * yet delivered are kept whole.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyRetention } from '../../middleware/sweep/retention.ts';
import type { NewAttempt, StepUpStore, VerifyStore } from '../../middleware/store/types.ts';
import { describeEachStore, type StoreUnderTest } from '../support/stores.ts';
import { fulfilOnce, newAttempt, storedAttempt } from '../support/attempts.ts';

const DAY = 86_400_000;
const T0 = 1_700_000_000_000;

function attempt(n: number, overrides: Partial<NewAttempt> = {}): NewAttempt {
  const at = T0 + n;
  const params = { account: `12345678${n}` };
  return newAttempt(n, { action: `action-${n}`, params, createdAt: at, nextCheckAt: at, ...overrides });
}

describeEachStore('support reads and retention', (kind) => {
  let h: StoreUnderTest;
  let store: VerifyStore;
  const fulfil = async (n: number, at: number) =>
    fulfilOnce(store, await storedAttempt(store, `session-${n}`), () => {}, at, { ordering: 'independent' });

  beforeEach(async () => {
    h = await kind.open();
    store = h.store;
  });
  afterEach(async () => {
    await h.dispose();
  });

  describe('reads for support screens', () => {
    it('lists a user’s attempts newest first, filtered by outcome and creation time, and finds one by sessionId', async () => {
      for (let n = 1; n <= 4; n++) await store.insertAttempt(attempt(n));
      await store.insertAttempt(attempt(5, { userRef: 'user-b' }));
      await fulfil(1, T0 + 10);
      await store.recordFailure('session-2', 'otp_locked', T0 + 10, { source: 'landing' });

      const mine = await store.listAttempts({ userRef: 'user-a', limit: 10 });
      expect(mine.map((a) => a.sessionId)).toEqual(['session-4', 'session-3', 'session-2', 'session-1']);
      const pending = await store.listAttempts({ userRef: 'user-a', outcome: 'pending', limit: 10 });
      expect(pending.map((a) => a.sessionId)).toEqual(['session-4', 'session-3']);
      const window = await store.listAttempts({ createdFrom: T0 + 2, createdBefore: T0 + 4, limit: 10 });
      expect(window.map((a) => a.sessionId)).toEqual(['session-3', 'session-2']);
      expect(await store.listAttempts({ limit: 2 })).toHaveLength(2);

      expect(await store.findAttemptBySessionId('session-2')).toMatchObject({
        outcome: 'failed',
        failureReason: 'otp_locked',
        outcomeSource: 'landing',
        redactedAt: null,
      });
      const fulfilled = await store.findAttemptBySessionId('session-1');
      expect(fulfilled).toMatchObject({ outcome: 'fulfilled', outcomeSource: null });
      expect(await store.findAttemptBySessionId('no-such-session')).toBeUndefined();
    });
  });

  describe('retention', () => {
    it(
      'removes params and destination of settled attempts after the first period, ' +
        'and deletes them after the second',
      async () => {
        // The ref bound to the user and number goes with the number: it could be matched against numbers.
        for (let n = 1; n <= 3; n++) await store.insertAttempt(attempt(n, { serviceUserRef: `vkd1_ref-${n}` }));
        await fulfil(1, T0);
        await store.recordFailure('session-2', 'device_changed', T0 + 20 * DAY);
        // session-3 stays pending: never touched.

        const at40 = T0 + 40 * DAY;
        const retain = (now: number) =>
          store.applyRetention({ now, redactBefore: now - 30 * DAY, deleteBefore: now - 90 * DAY, limit: 50 });
        expect(await retain(at40)).toEqual({
          redacted: 1,
          deleted: 0,
        });
        const redacted = await store.findAttemptBySessionId('session-1');
        expect(redacted).toMatchObject({ params: null, destination: null, serviceUserRef: null, redactedAt: at40 });
        expect(await store.findAttemptBySessionId('session-2')).toMatchObject({
          params: { account: '123456782' },
          destination: '+15550100001',
          serviceUserRef: 'vkd1_ref-2',
          redactedAt: null,
        });

        const at95 = T0 + 95 * DAY;
        expect(await retain(at95)).toEqual({
          redacted: 1,
          deleted: 1,
        });
        expect(await store.findAttemptBySessionId('session-1')).toBeUndefined();
        expect(await store.findAttemptBySessionId('session-2')).toMatchObject({ params: null, destination: null });
        const pending = await store.findAttemptBySessionId('session-3');
        expect(pending).toMatchObject({ outcome: 'pending', params: { account: '123456783' } });
      },
    );

    it('works in batches of `limit`', async () => {
      for (let n = 1; n <= 5; n++) {
        await store.insertAttempt(attempt(n));
        await fulfil(n, T0);
      }
      const at = T0 + 31 * DAY;
      const batch = { now: at, redactBefore: at - 30 * DAY, deleteBefore: at - 90 * DAY, limit: 2 };
      const runs = [];
      for (let i = 0; i < 4; i++) runs.push((await store.applyRetention(batch)).redacted);
      expect(runs).toEqual([2, 2, 1, 0]);
    });

    it(
      'keeps an attempt whole while its outcome event waits for delivery, ' +
        'and deletes the event with it once delivered',
      async () => {
        await store.insertAttempt(attempt(1));
        const options = { ordering: 'independent' as const, event: { source: 'sweep' as const } };
        const fulfilled = await fulfilOnce(store, await storedAttempt(store, 'session-1'), () => {}, T0, options);
        expect(fulfilled.kind).toBe('fulfilled');
        const at = T0 + 100 * DAY;
        const batch = { now: at, redactBefore: at - 30 * DAY, deleteBefore: at - 90 * DAY, limit: 50 };
        expect(await store.applyRetention(batch)).toEqual({ redacted: 0, deleted: 0 });
        expect(await store.findAttemptBySessionId('session-1')).toMatchObject({ params: { account: '123456781' } });

        const [event] = await store.claimOutcomeEvents({ now: at, owner: 'w', leaseMs: 60_000, limit: 10 });
        expect(event?.attempt.sessionId).toBe('session-1');
        await store.markOutcomeEventDelivered(event!.eventId, 'w', at);
        expect(await store.applyRetention(batch)).toEqual({ redacted: 1, deleted: 1 });
        expect(await store.findAttemptBySessionId('session-1')).toBeUndefined();
        expect(await store.claimOutcomeEvents({ now: at + DAY, owner: 'w', leaseMs: 60_000, limit: 10 })).toEqual([]);
      },
    );

    it(
      'deletes step-up grants started more than a day ago (past any guard’s maxAge), a batch a run, ' +
        'retention on or off, and keeps the ones a guard may still read',
      async () => {
        const stepUp = store.stepUp as StepUpStore;
        const grant = (n: number, startedAt: number) =>
          stepUp.insertGrant({
            sessionId: `session-${n}`,
            userRef: 'user-a',
            scope: 'payout',
            resourceKey: `payee-${n}`,
            browserSession: `browser-${n}`,
            startedAt,
            grantedAt: startedAt + 1,
          });
        const now = T0 + 10 * DAY;
        for (let n = 1; n <= 3; n++) await grant(n, now - DAY - n);
        await grant(4, now - DAY + 1);
        const run = async (retention: Parameters<typeof applyRetention>[2]) =>
          (await applyRetention(store, now, retention)).grantsDeleted;
        const batchOfTwo = { redactAfterMs: 30 * DAY, deleteAfterMs: 90 * DAY, batchSize: 2 };
        expect([await run(batchOfTwo), await run(false), await run(batchOfTwo)]).toEqual([2, 1, 0]);
        const left = await stepUp.listGrants({ userRef: 'user-a', limit: 50 });
        expect(left.map((g) => g.sessionId)).toEqual(['session-4']);
      },
    );
  });
});
