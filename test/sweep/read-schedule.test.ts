/**
 * The sweep's default read schedule (middleware/sweep/read-ages.ts) on the test clock: an attempt
 * nobody finishes is read at 3 min, then at 4.5, 6.5, 9, 12, 16, 22, 30, 45, 75 min, 2, 3.5, 6, 10,
 * 16 h and a minute before the 24 h window closes (16 reads), never outside the window; a run's
 * reschedules are written batch by batch, before its next claim. Same suite on every store.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SWEEP_READ_AGES_MS, nextReadAge } from '../../middleware/sweep/read-ages.ts';
import { computeNextCheckAt } from '../../middleware/sweep/schedule.ts';
import { SWEEP_WINDOW_MS } from '../../middleware/sweep/sweep-options.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import type { SweepDeps } from '../../middleware/sweep/sweep-report.ts';
import type { ActionDefinition } from '../../middleware/types.ts';
import { describeEachStore } from '../support/stores.ts';
import { ACTION, RETURN_URL, useSweepEmulator } from '../support/sweep-bench.ts';
import { MIN, READ_AGES } from '../support/sweep-day.ts';
import { useSweepSuite } from '../support/sweep-suite.ts';

const HOUR = 60 * MIN;

describe('the default read ages', () => {
  it('are 16 reads from 3 min to a minute before the window closes, and the next is the window end', () => {
    expect([3 * MIN, ...DEFAULT_SWEEP_READ_AGES_MS]).toEqual(READ_AGES);
    expect(nextReadAge(SWEEP_WINDOW_MS - MIN)).toBe(SWEEP_WINDOW_MS);
  });

  it('skip the times a late run missed, keep reads 30 s apart, and never go past the window end', () => {
    const createdAt = 1_000_000;
    const at = (age: number) => computeNextCheckAt({ createdAt, sweepChecks: 3 }, createdAt + age) - createdAt;
    // A run that took the 3 min read 5 min late (age 8 min) reads next at 9 min, not at 4.5.
    expect(at(8 * MIN)).toBe(9 * MIN);
    // 29 s before a read time is too close: the one after it.
    expect(at(9 * MIN - 29_000)).toBe(12 * MIN);
    expect(at(9 * MIN - 30_000)).toBe(9 * MIN);
    // Late in the day: the last read a minute before the end, then the end, then still the end.
    expect(at(17 * HOUR)).toBe(SWEEP_WINDOW_MS - MIN);
    expect(at(SWEEP_WINDOW_MS - MIN)).toBe(SWEEP_WINDOW_MS);
    expect(at(SWEEP_WINDOW_MS + HOUR)).toBe(SWEEP_WINDOW_MS);
  });

  it("an integrator's own backoffMs still counts delays from now, by reads so far", () => {
    const createdAt = 1_000_000;
    const own = [10_000, 20_000];
    expect(computeNextCheckAt({ createdAt, sweepChecks: 0 }, createdAt + 5000, own)).toBe(createdAt + 15_000);
    expect(computeNextCheckAt({ createdAt, sweepChecks: 7 }, createdAt + 5000, own)).toBe(createdAt + 25_000);
  });
});

const emu = useSweepEmulator();

describeEachStore('the default sweep schedule over a day', (kind) => {
  const suite = useSweepSuite(emu, kind);

  it('reads an attempt nobody finishes at exactly its read ages, 16 times, and never at or after 24 h', async () => {
    const h = await suite.open();
    const verifyClient = suite.client;
    let frozenAt = Date.now();
    const createdAt = frozenAt;
    const state = randomBytes(16).toString('base64url');
    const input = {
      returnUrl: RETURN_URL,
      destination: '+15550100001',
      userRef: 'user-1',
      state,
      platform: 'web' as const,
    };
    const session = await verifyClient.createSession({ ...input, operationSensitivity: 'normal' }, `k-${state}`);
    await h.store.insertAttempt({
      ...input,
      sessionId: session.sessionId,
      action: ACTION,
      params: {},
      returnTo: '/done',
      sensitivity: 'normal',
      createdAt,
      nextCheckAt: createdAt + 3 * MIN,
    });
    const action: ActionDefinition<unknown> = {
      name: ACTION,
      operationSensitivity: 'normal',
      successPath: '/done',
      fulfil: h.effect('sweep') as never,
    };
    const deps: SweepDeps<unknown> = {
      client: verifyClient,
      store: h.store,
      actions: new Map([[ACTION, action]]),
      now: () => frozenAt,
    };
    const statusReads = async () => (await emu.control.stats()).statusReads;
    const readAges: number[] = [];
    let due = createdAt + 3 * MIN;
    while (due < createdAt + SWEEP_WINDOW_MS) {
      // A millisecond before it is due, a run claims nothing and reads nothing.
      frozenAt = due - 1;
      const before = await statusReads();
      expect((await runSweep(deps)).claimed).toBe(0);
      expect(await statusReads()).toBe(before);
      frozenAt = due;
      expect(await runSweep(deps)).toMatchObject({ reads: 1, pending: 1 });
      readAges.push(due - createdAt);
      const stored = await h.store.findAttemptByState(state);
      expect(stored).toMatchObject({ outcome: 'pending', sweepChecks: readAges.length });
      due = stored!.nextCheckAt;
    }
    expect(readAges).toEqual(READ_AGES);
    expect(await statusReads()).toBe(16);
    // At the window's end it is marked expired without a read, and never read again.
    expect(due).toBe(createdAt + SWEEP_WINDOW_MS);
    frozenAt = due;
    expect(await runSweep(deps)).toMatchObject({ reads: 0, expired: 1 });
    frozenAt = due + SWEEP_WINDOW_MS;
    expect((await runSweep(deps)).claimed).toBe(0);
    expect(await statusReads()).toBe(16);
    expect(await h.countEffects()).toBe(0);
  });
});

describeEachStore('pending attempts rescheduled batch by batch', (kind) => {
  const suite = useSweepSuite(emu, kind);

  it("writes a batch's reschedules before the next claim: at most one batch of them waits in memory", async () => {
    const h = await suite.open();
    const now = Date.now();
    for (let i = 0; i < 6; i++) {
      const state = randomBytes(16).toString('base64url');
      const input = { returnUrl: RETURN_URL, destination: `+1555010010${i}`, userRef: `user-${i}`, state };
      const created = await suite.client.createSession(
        { ...input, platform: 'web', operationSensitivity: 'normal' },
        `k-${state}`,
      );
      await h.store.insertAttempt({
        ...input,
        sessionId: created.sessionId,
        platform: 'web',
        action: ACTION,
        params: {},
        returnTo: '/done',
        sensitivity: 'normal',
        createdAt: now - 4 * MIN,
        nextCheckAt: now - MIN,
      });
    }
    // Each call of the store, in order: a claim, or the number of reschedules written.
    const calls: (number | 'claim')[] = [];
    const store = Object.create(h.store) as typeof h.store;
    store.claimDueAttempts = (query) => {
      calls.push('claim');
      return h.store.claimDueAttempts(query);
    };
    store.scheduleNextChecks = (owner, checks) => {
      calls.push(checks.length);
      return h.store.scheduleNextChecks(owner, checks);
    };
    const action: ActionDefinition<unknown> = {
      name: ACTION,
      operationSensitivity: 'normal',
      successPath: '/done',
      fulfil() {},
    };
    const deps: SweepDeps<unknown> = {
      client: suite.client,
      store,
      actions: new Map([[ACTION, action]]),
      now: () => now,
    };
    expect(await runSweep(deps, { batchSize: 2, concurrency: 1 })).toMatchObject({ reads: 6, pending: 6 });
    // Nobody entered a code: every attempt rescheduled once, in writes of a batch at most, and
    // every claim after the first comes right after the reschedules read since the last one.
    const writes = calls.filter((c): c is number => c !== 'claim');
    expect(writes.reduce((a, b) => a + b, 0)).toBe(6);
    expect(Math.max(...writes)).toBeLessThanOrEqual(2);
    const claims = calls.flatMap((c, i) => (c === 'claim' ? [i] : []));
    expect(claims.length).toBeGreaterThanOrEqual(3);
    for (const at of claims.slice(1)) expect(typeof calls[at - 1]).toBe('number');
  });
});
