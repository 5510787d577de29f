/**
 * Ordering and the outcome outbox, the store's side, one suite on SQLite and PostgreSQL: the start
 * order (a sequence no clock can tie), the ordering decision inside the fulfil transaction (also
 * across racing processes), outcome events written in the same transaction as the outcome (and
 * never without it), and their leases. (SQLite's upgrade of a version-1 file: sqlite-store.test.ts.)
 * The racing processes run on the stores as built (test/fixtures/*-racer.mjs): needs `npm run
 * build` (npm test builds dist/ first).
 */
import { fork } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { racerOnBuiltStores } from '../support/built.ts';
import { describeEachStore, type StoreUnderTest } from '../support/stores.ts';
import { fulfilOnce, newAttempt, storedAttempt } from '../support/attempts.ts';

// The same clock reading for every attempt (the helper's default): the order must not depend on it.
const attempt = newAttempt;

describeEachStore('ordering and outcome events', (kind) => {
  let h: StoreUnderTest;
  const applied: string[] = [];
  const effect = (_tx: unknown, a: { sessionId: string }) => void applied.push(a.sessionId);
  const sweepEvent = { event: { source: 'sweep' as const } };
  beforeEach(async () => {
    h = await kind.open();
    applied.length = 0;
  });
  afterEach(async () => {
    await h.dispose();
  });

  describe('start order', () => {
    it(
      'attempts inserted with the same createdAt still get strictly increasing startSeq, and keep their ' +
        'destination',
      async () => {
        for (const n of [1, 2, 3]) await h.store.insertAttempt(attempt(n));
        const seqOf = async (n: number) => (await h.store.findAttemptByState(`state-${n}`))!.startSeq;
        const seqs = await Promise.all([1, 2, 3].map(seqOf));
        expect(seqs[0]! < seqs[1]! && seqs[1]! < seqs[2]!).toBe(true);
        expect((await h.store.findAttemptByState('state-2'))?.destination).toBe('+15550100001');
      },
    );
  });

  describe('ordering inside the fulfil transaction', () => {
    it("fulfilling the newer attempt supersedes the user's older pending ones of that action, and no one else's", async () => {
      await h.store.insertAttempt(attempt(1));
      await h.store.insertAttempt(attempt(2, { action: 'confirm_phone' }));
      await h.store.insertAttempt(attempt(3, { userRef: 'user-b' }));
      await h.store.insertAttempt(attempt(4));
      const result = await fulfilOnce(h.store, await storedAttempt(h.store, 'session-4'), effect, 10);
      expect(result.kind).toBe('fulfilled');
      expect(result.kind === 'fulfilled' && result.superseded.map((a) => a.sessionId)).toEqual(['session-1']);
      const older = await h.store.findAttemptByState('state-1');
      expect(older).toMatchObject({ outcome: 'superseded', supersededBy: 'session-4', finishedAt: 10 });
      expect((await h.store.findAttemptByState('state-2'))?.outcome).toBe('pending');
      expect((await h.store.findAttemptByState('state-3'))?.outcome).toBe('pending');
      expect((await fulfilOnce(h.store, await storedAttempt(h.store, 'session-1'), effect, 11)).kind).toBe(
        'not_pending',
      );
      expect(applied).toEqual(['session-4']);
    });

    it(
      "an older attempt still pending when a newer one was applied ('independent' then) is superseded, not " +
        'applied',
      async () => {
        await h.store.insertAttempt(attempt(1));
        await h.store.insertAttempt(attempt(2));
        await fulfilOnce(h.store, await storedAttempt(h.store, 'session-2'), effect, 10, { ordering: 'independent' });
        expect((await h.store.findAttemptByState('state-1'))?.outcome).toBe('pending');
        const late = await fulfilOnce(h.store, await storedAttempt(h.store, 'session-1'), effect, 11, {
          ordering: 'latest',
          ...sweepEvent,
        });
        expect(late).toMatchObject({
          kind: 'superseded',
          attempt: { outcome: 'superseded', supersededBy: 'session-2' },
        });
        expect(late.kind === 'superseded' && late.eventIds.length).toBe(1);
        expect(applied).toEqual(['session-2']);
      },
    );

    it("ordering 'independent' applies an older attempt after a newer one", async () => {
      await h.store.insertAttempt(attempt(1));
      await h.store.insertAttempt(attempt(2));
      await fulfilOnce(h.store, await storedAttempt(h.store, 'session-2'), effect, 10, { ordering: 'independent' });
      expect(
        (await fulfilOnce(h.store, await storedAttempt(h.store, 'session-1'), effect, 11, { ordering: 'independent' }))
          .kind,
      ).toBe('fulfilled');
      expect(applied).toEqual(['session-2', 'session-1']);
    });

    it('an older attempt applied first does not stop a newer one', async () => {
      await h.store.insertAttempt(attempt(1));
      await h.store.insertAttempt(attempt(2));
      expect((await fulfilOnce(h.store, await storedAttempt(h.store, 'session-1'), effect, 10)).kind).toBe('fulfilled');
      expect((await fulfilOnce(h.store, await storedAttempt(h.store, 'session-2'), effect, 11)).kind).toBe('fulfilled');
      expect(applied).toEqual(['session-1', 'session-2']);
    });
  });

  describe('ordering across processes', () => {
    it('four processes fulfilling the same attempts in different orders never apply an older one after a newer one', async () => {
      await h.exec(
        h.kind === 'sqlite'
          ? 'CREATE TABLE ordered_effects (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT, user_ref TEXT)'
          : 'CREATE TABLE ordered_effects (id BIGSERIAL PRIMARY KEY, session_id TEXT, user_ref TEXT)',
      );
      const sessionIds = Array.from({ length: 30 }, (_, i) => `session-${i}`);
      for (let i = 0; i < 30; i++) await h.store.insertAttempt(attempt(i, { userRef: `user-${i % 3}` }));
      const reversed = [...sessionIds].reverse();
      const race = async (orders: string[][]) => {
        const racers = orders.map((order) =>
          fork(racerOnBuiltStores('ordering-racer.mjs'), [h.spec, ...order], { execArgv: [] }),
        );
        const ready = racers.map((racer) => new Promise((resolve) => racer.once('message', resolve)));
        const done = racers.map(
          (racer) =>
            new Promise<Record<string, number>>((resolve, reject) => {
              racer.on('message', (message) => {
                if (typeof message === 'object') resolve(message as Record<string, number>);
              });
              racer.once('exit', (code) => code !== 0 && reject(new Error(`racer exited with ${code}`)));
            }),
        );
        await Promise.all(ready);
        for (const racer of racers) racer.send('go');
        return Promise.all(done);
      };
      // First, alone: user-0's attempts newest first. Applying the newest supersedes the older ones,
      // so the racers below are sure to meet attempts a newer one already settled, however the
      // machine schedules them (without this, one racer finishing before the others start met none).
      const userZeroNewestFirst = reversed.filter((id) => Number(id.split('-')[1]) % 3 === 0);
      const first = await race([userZeroNewestFirst]);
      const counts = await race([sessionIds, reversed, sessionIds.filter((_, i) => i % 2 === 0), reversed]);
      // Not vacuous: racers did meet attempts a newer one had already settled.
      const settled = (c: Record<string, number>) => (c.superseded ?? 0) + (c.not_pending ?? 0);
      expect(settled(first[0]!)).toBe(9);
      expect(counts.reduce((n, c) => n + settled(c), 0)).toBeGreaterThan(0);
      // And they raced: some racer lost an attempt it had read as pending to another racer's commit.
      const lost = counts.map((c) => c.lost ?? 0);
      expect(
        lost.reduce((a, b) => a + b, 0),
        `lost after reading pending: ${lost.join(', ')}`,
      ).toBeGreaterThan(0);

      const appliedInOrder = await h.query<{ userRef: string; seq: number }>(
        `SELECT e.user_ref AS "userRef", a.start_seq AS seq FROM ordered_effects e
         JOIN verify_kit_attempts a ON a.session_id = e.session_id ORDER BY e.id`,
      );
      const last = new Map<string, number>();
      for (const { userRef, seq } of appliedInOrder) {
        expect(seq, userRef).toBeGreaterThan(last.get(userRef) ?? -1);
        last.set(userRef, seq);
      }
      // Each user's newest attempt is the one that stays applied; each attempt applied at most once.
      for (const user of ['user-0', 'user-1', 'user-2']) {
        const newest = (await h.store.findAttemptByState(`state-${27 + Number(user.slice(-1))}`))!;
        expect(newest.outcome).toBe('fulfilled');
        expect(last.get(user)).toBe(newest.startSeq);
      }
      const twice = await h.query('SELECT session_id FROM ordered_effects GROUP BY session_id HAVING count(*) > 1');
      expect(twice).toEqual([]);
    });
  });

  describe('outcome events (the outbox)', () => {
    const events = () =>
      h.query('SELECT session_id AS "sessionId", outcome, source FROM verify_kit_outcome_events ORDER BY event_id');

    it('are written with the outcome they describe, one per settled attempt, only when asked for', async () => {
      for (const n of [1, 2, 3, 4]) await h.store.insertAttempt(attempt(n, { userRef: `user-${n}` }));
      await fulfilOnce(h.store, await storedAttempt(h.store, 'session-1'), effect, 10, {
        event: { source: 'landing' },
      });
      await h.store.recordFailure('session-2', 'otp_locked', 10, { source: 'mobile' });
      // Already failed: no second event.
      await h.store.recordFailure('session-2', 'otp_locked', 11, { source: 'sweep' });
      await h.store.insertAttempt(attempt(5, { userRef: 'user-5', createdAt: 0 }));
      expect(await h.store.expireAttempts(1_000_500, 1000, { source: 'sweep' })).toBe(1);
      await fulfilOnce(h.store, await storedAttempt(h.store, 'session-3'), effect, 12); // no event asked for
      expect(await events()).toEqual([
        { sessionId: 'session-1', outcome: 'fulfilled', source: 'landing' },
        { sessionId: 'session-2', outcome: 'failed', source: 'mobile' },
        { sessionId: 'session-5', outcome: 'expired', source: 'sweep' },
      ]);
    });

    it('are never written when the effect throws: no outcome, no event', async () => {
      await h.store.insertAttempt(attempt(1));
      await h.store.insertAttempt(attempt(2));
      const failing = () => {
        throw new Error('effect failed');
      };
      await expect(
        fulfilOnce(h.store, await storedAttempt(h.store, 'session-2'), failing, 10, sweepEvent),
      ).rejects.toThrow('effect failed');
      expect(await events()).toEqual([]);
      expect((await h.store.findAttemptByState('state-1'))?.outcome).toBe('pending');
      expect((await h.store.findAttemptByState('state-2'))?.outcome).toBe('pending');
    });

    it('a fulfilment writes events for the older attempts it superseded too', async () => {
      await h.store.insertAttempt(attempt(1));
      await h.store.insertAttempt(attempt(2));
      const result = await fulfilOnce(h.store, await storedAttempt(h.store, 'session-2'), effect, 10, sweepEvent);
      expect(result.kind === 'fulfilled' && result.eventIds.length).toBe(2);
      expect(await events()).toEqual([
        { sessionId: 'session-2', outcome: 'fulfilled', source: 'sweep' },
        { sessionId: 'session-1', outcome: 'superseded', source: 'sweep' },
      ]);
    });

    it('are leased to one owner at a time, come back when the lease lapses, and never after delivery', async () => {
      await h.store.insertAttempt(attempt(1));
      await fulfilOnce(h.store, await storedAttempt(h.store, 'session-1'), effect, 10, sweepEvent);
      const claim = (owner: string, now: number) =>
        h.store.claimOutcomeEvents({ now, owner, leaseMs: 1000, limit: 10 });
      const [first] = await claim('a', 20);
      expect(first).toMatchObject({
        outcome: 'fulfilled',
        source: 'sweep',
        deliveries: 1,
        occurredAt: 10,
        attempt: { sessionId: 'session-1' },
      });
      expect(await claim('b', 500)).toEqual([]); // leased to a
      await h.store.retryOutcomeEvent(first!.eventId, 'a', 5000); // a's hook threw: try again at 5000
      expect(await claim('b', 4999)).toEqual([]);
      const [again] = await claim('b', 5000);
      expect(again?.deliveries).toBe(2);
      await h.store.markOutcomeEventDelivered(again!.eventId, 'a', 5001); // not a's any more: no effect
      expect(await claim('c', 7000)).toHaveLength(1); // b's lease lapsed at 6000 (b crashed)
      await h.store.markOutcomeEventDelivered(again!.eventId, 'c', 7001);
      expect(await claim('d', 99_999)).toEqual([]);
    });

    it('claims only the events asked for, and gives each event to one of several owners claiming at once', async () => {
      for (const n of [1, 2, 3, 4, 5, 6]) await h.store.insertAttempt(attempt(n, { userRef: `user-${n}` }));
      const ids: string[] = [];
      for (const n of [1, 2, 3, 4, 5, 6]) {
        const result = await fulfilOnce(h.store, await storedAttempt(h.store, `session-${n}`), effect, 10, sweepEvent);
        if (result.kind === 'fulfilled') ids.push(...result.eventIds);
      }
      const only = { now: 20, owner: 'request', leaseMs: 1000, limit: 10, eventIds: [ids[2]!] };
      const mine = await h.store.claimOutcomeEvents(only);
      expect(mine.map((e) => e.eventId)).toEqual([ids[2]]);
      const claimAs = (owner: string) => h.store.claimOutcomeEvents({ now: 20, owner, leaseMs: 1000, limit: 2 });
      const batches = await Promise.all(['a', 'b', 'c'].map(claimAs));
      const claimed = batches.flat().map((e) => e.eventId);
      expect(new Set(claimed).size).toBe(claimed.length);
      expect(claimed.sort()).toEqual(ids.filter((id) => id !== ids[2]).sort());
    });
  });
});
