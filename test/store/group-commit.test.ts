/**
 * Group commit (VerifyStore.fulfilBatch, and the sweep that uses it), on every store: many
 * fulfilments in one transaction must keep each attempt's guarantees on its own: an action and its
 * mark commit together or not at all, an attempt is fulfilled once however many callers race, and
 * two processes committing overlapping groups neither deadlock nor fulfil anything twice.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { FulfilContext } from '../../middleware/context.ts';
import { completeAttempt } from '../../middleware/fulfil/fulfil.ts';
import type { FulfilEffect, FulfilRequest, VerifyStore } from '../../middleware/store/types.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import type { ActionDefinition, SessionStatus } from '../../middleware/types.ts';
import { fulfilOnce, newAttempt, storedAttempt } from '../support/attempts.ts';
import { describeEachStore, type StoreUnderTest } from '../support/stores.ts';

const ACTION = 'change_payout';
const sweepEvent = { event: { source: 'sweep' as const } };

/** A client for which every session is verified, echoing what was stored; each read takes `delayMs`. */
function verifiedClient(store: VerifyStore<unknown>, delayMs: number) {
  return {
    async getSession(sessionId: string): Promise<SessionStatus> {
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      const stored = await store.findAttemptBySessionId(sessionId);
      return { status: 'verified', state: stored!.state, userRef: stored!.userRef };
    },
  };
}

describeEachStore('group commit', (kind) => {
  let h: StoreUnderTest;
  beforeEach(async () => {
    h = await kind.open();
  });
  afterEach(async () => {
    await h.dispose();
  });

  const request = async (n: number, effect: FulfilEffect<unknown>): Promise<FulfilRequest<unknown>> => ({
    attempt: await storedAttempt(h.store, `session-${n}`),
    effect,
    now: 100 + n,
    options: sweepEvent,
  });

  it('rolls back only the attempt whose action throws: the others in the group commit with their marks and events', async () => {
    for (const n of [1, 2, 3]) await h.store.insertAttempt(newAttempt(n, { userRef: `user-${n}` }));
    // The throwing action writes its effect row first: it must be undone without undoing the others.
    const throwing = h.effect('test', () => {
      throw new Error('payout provider down');
    });
    const settlements = await h.store.fulfilBatch(
      await Promise.all([request(1, h.effect()), request(2, throwing), request(3, h.effect())]),
    );

    expect(settlements.map((s) => s.ok)).toEqual([true, false, true]);
    expect(settlements[1]).toMatchObject({ ok: false, error: { message: 'payout provider down' } });
    expect(settlements[0]).toMatchObject({ ok: true, result: { kind: 'fulfilled' } });
    const effects = await h.query<{ session_id: string }>('SELECT session_id FROM effects ORDER BY session_id');
    expect(effects.map((e) => e.session_id)).toEqual(['session-1', 'session-3']);
    expect(await h.store.findAttemptByState('state-2')).toMatchObject({ outcome: 'pending', finishedAt: null });
    expect(await h.store.findAttemptByState('state-3')).toMatchObject({ outcome: 'fulfilled', fulfilledAt: 103 });
    const events = await h.store.claimOutcomeEvents({ now: 1_000, owner: 'test', leaseMs: 1_000, limit: 10 });
    expect(events.map((e) => e.attempt.sessionId).sort()).toEqual(['session-1', 'session-3']);
    // Nothing was lost: the rolled-back attempt is fulfilled by a later call.
    expect((await fulfilOnce(h.store, await storedAttempt(h.store, 'session-2'), h.effect(), 200)).kind).toBe(
      'fulfilled',
    );
    expect(await h.countEffects()).toBe(3);
  });

  it('keeps the ordering inside a group: an older attempt of the same user and action never applies after a newer one', async () => {
    for (const n of [1, 2, 3, 4]) await h.store.insertAttempt(newAttempt(n));
    expect((await fulfilOnce(h.store, await storedAttempt(h.store, 'session-3'), h.effect('first'), 50)).kind).toBe(
      'fulfilled',
    );
    // 1 and 2 were superseded by 3's fulfilment; 4, newer than 3, still applies.
    const settlements = await h.store.fulfilBatch(
      await Promise.all([request(4, h.effect()), request(1, h.effect()), request(2, h.effect())]),
    );
    expect(settlements.map((s) => (s.ok ? s.result.kind : 'error'))).toEqual([
      'fulfilled',
      'not_pending',
      'not_pending',
    ]);
    expect(await h.effectsBy()).toEqual({ first: 1, test: 1 });
    const older = await h.store.findAttemptByState('state-1');
    expect(older).toMatchObject({ outcome: 'superseded', supersededBy: 'session-3' });
  });

  it('decides attempts of one user and action in a group as one at a time in sessionId order, a repeated one included', async () => {
    // Started 3 then 1 then 2: session-1 sorts first but is newer than session-3.
    for (const n of [3, 1, 2]) await h.store.insertAttempt(newAttempt(n));
    const settlements = await h.store.fulfilBatch([
      await request(3, h.effect()),
      await request(2, h.effect()),
      await request(1, h.effect()),
      await request(1, h.effect()),
    ]);
    const kinds = settlements.map((s) => (s.ok ? s.result.kind : 'error'));
    // session-1 applies and supersedes the older session-3; the repeat finds it fulfilled; session-2
    // (newer than both) still applies; session-3 is no longer pending when its turn comes.
    expect(kinds).toEqual(['not_pending', 'fulfilled', 'fulfilled', 'already_fulfilled']);
    expect(settlements[2]).toMatchObject({ ok: true, result: { superseded: [{ sessionId: 'session-3' }] } });
    expect(await h.store.findAttemptByState('state-3')).toMatchObject({
      outcome: 'superseded',
      supersededBy: 'session-1',
    });
    const effects = await h.query<{ session_id: string }>('SELECT session_id FROM effects ORDER BY session_id');
    expect(effects.map((e) => e.session_id)).toEqual(['session-1', 'session-2']);
  });

  it('two processes committing the same attempts in opposite orders neither deadlock nor fulfil any twice', async () => {
    // Users shared across each group, so both processes need the same rows and user-and-action locks.
    const independent = Array.from({ length: 24 }, (_, i) => i + 1);
    const latest = Array.from({ length: 24 }, (_, i) => i + 25);
    for (const n of [...independent, ...latest])
      await h.store.insertAttempt(newAttempt(n, { userRef: `user-${n % 6}` }));
    const other = await h.openAnother();
    const batch = (by: string, order: number[], ordering: 'independent' | 'latest') =>
      Promise.all(order.map(async (n) => ({ ...(await request(n, h.effect(by))), options: { ordering } })));
    const reversed = (ns: number[]) => [...ns].reverse();
    const groups = await Promise.all([
      h.store.fulfilBatch(await batch('a', independent, 'independent')),
      other.fulfilBatch(await batch('b', reversed(independent), 'independent')),
      h.store.fulfilBatch(await batch('c', latest, 'latest')),
      other.fulfilBatch(await batch('d', reversed(latest), 'latest')),
    ]);

    expect(groups.flat().every((s) => s.ok)).toBe(true);
    expect(await h.duplicateEffects()).toEqual([]);
    // Oldest first (start order), read through the store.
    const outcomes = (await h.store.listAttempts({ limit: 100 }))
      .sort((a, b) => a.startSeq - b.startSeq)
      .map((a) => ({ session_id: a.sessionId, outcome: a.outcome }));
    expect(outcomes.slice(0, 24).every((o) => o.outcome === 'fulfilled')).toBe(true);
    // With 'latest' each attempt is fulfilled or superseded, and every user's newest one is fulfilled.
    const newestOfUser = new Set(latest.slice(-6).map((n) => `session-${n}`));
    for (const o of outcomes.slice(24)) {
      if (newestOfUser.has(o.session_id)) expect(o.outcome).toBe('fulfilled');
      else expect(o.outcome).toMatch(/^(fulfilled|superseded)$/);
    }
    const fulfilled = outcomes.filter((o) => o.outcome === 'fulfilled').length;
    expect(await h.countEffects()).toBe(fulfilled);
  });

  it('two sweeps and concurrent landings over the same due attempts fulfil each exactly once', async () => {
    const total = 60;
    for (let n = 1; n <= total; n++) await h.store.insertAttempt(newAttempt(n, { userRef: `user-${n}` }));
    const other = await h.openAnother();
    const action = (by: string): ActionDefinition<unknown> => ({
      name: ACTION,
      operationSensitivity: 'sensitive',
      successPath: '/done',
      fulfil: h.effect(by) as unknown as ActionDefinition<unknown>['fulfil'],
    });
    const deps = (store: VerifyStore<unknown>, by: string): FulfilContext<unknown> => ({
      client: verifiedClient(store, 2),
      store,
      actions: new Map([[ACTION, action(by)]]),
      now: () => 2_000_000,
    });
    const options = { batchSize: 8, concurrency: 4 };
    const landings = async () => {
      for (let n = 1; n <= total; n += 3) {
        const attempt = await h.store.findAttemptByState(`state-${n}`);
        await completeAttempt(deps(h.store, 'landing'), attempt!, 'landing');
      }
    };
    const [one, two] = await Promise.all([
      runSweep(deps(h.store, 'sweep-1'), options),
      runSweep(deps(other, 'sweep-2'), options),
      landings(),
    ]);

    expect(one.errors + two.errors).toBe(0);
    expect(await h.duplicateEffects()).toEqual([]);
    expect(await h.countEffects()).toBe(total);
    const by = await h.effectsBy();
    expect(one.fulfilled + two.fulfilled + (by.landing ?? 0)).toBe(total);
    expect(one.fulfilled).toBe(by['sweep-1'] ?? 0);
    const pending = await h.store.listAttempts({ outcome: 'pending', limit: 10 });
    expect(pending).toEqual([]);
  });
});
