/**
 * A sweep run reads each attempt at most once: one still pending whose next check falls due
 * before the run ends (a short backoff, the quick retry, the schedule's first gaps in a long
 * backlog run) is claimed again once its reschedule is written, and set aside unread, still
 * leased, for the next run. Reads are paid; the run's second read of an attempt found nothing new.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import { resolveSweepOptions } from '../../middleware/sweep/sweep-options.ts';
import { checkDueAttempts } from '../../middleware/sweep/sweep-run-checks.ts';
import { startRun } from '../../middleware/sweep/sweep-run-state.ts';
import type { SweepDeps } from '../../middleware/sweep/sweep-report.ts';
import type { ActionDefinition, VerifyClient } from '../../middleware/types.ts';
import { ACTION } from '../support/sweep-bench.ts';
import { insertDueAttempt, MIN } from '../support/sweep-day.ts';
import { describeEachStore, type StoreUnderTest } from '../support/stores.ts';

describeEachStore('a sweep run and attempts due again before it ends', (kind) => {
  let h: StoreUnderTest;
  beforeEach(async () => {
    h = await kind.open();
  });
  afterEach(async () => {
    await h.dispose();
  });

  it('reads each attempt once, and the next run reads them again', async () => {
    // The kit's clock: each read takes two seconds of it, so a 1 s backoff is due within the run.
    let now = Date.now();
    const sessions = Array.from({ length: 8 }, (_, i) => `once-${i}`);
    for (const sessionId of sessions) await insertDueAttempt(h.store, sessionId, now - 10 * MIN);
    const reads = new Map<string, number>();
    const client: VerifyClient = {
      createSession: () => Promise.reject(new Error('the sweep creates no session')),
      getSession: (sessionId) => {
        reads.set(sessionId, (reads.get(sessionId) ?? 0) + 1);
        now += 2000;
        return Promise.resolve({ status: 'pending' } as never);
      },
      close: () => Promise.resolve(),
    };
    const action: ActionDefinition<unknown> = {
      name: ACTION,
      operationSensitivity: 'normal',
      successPath: '/done',
      fulfil: () => undefined,
    };
    const deps: SweepDeps<unknown> = { client, store: h.store, actions: new Map([[ACTION, action]]), now: () => now };
    const options = { batchSize: 2, concurrency: 1, backoffMs: [1000], timeBudgetMs: 60_000 };

    const first = await runSweep(deps, options);
    expect({ reads: first.reads, readTwice: [...reads].filter(([, n]) => n > 1) }).toEqual({ reads: 8, readTwice: [] });
    // Those set aside were handed back with the run: the next run claims and reads them.
    now += 1000;
    const second = await runSweep(deps, options);
    expect(second.reads).toBe(8);
    expect([...reads.values()]).toEqual(sessions.map(() => 2));
  });

  it('remembers only the sessions still pending after their read, not every session it read', async () => {
    // A backlog run over many settled attempts would otherwise hold all their ids until it ends.
    const now = Date.now();
    const sessions = Array.from({ length: 12 }, (_, i) => `kept-${i}`);
    for (const sessionId of sessions) await insertDueAttempt(h.store, sessionId, now - 10 * MIN);
    const stillPending = new Set(sessions.filter((_, i) => i % 3 === 0));
    const client: VerifyClient = {
      createSession: () => Promise.reject(new Error('the sweep creates no session')),
      getSession: (sessionId) =>
        Promise.resolve(
          (stillPending.has(sessionId) ? { status: 'pending' } : { status: 'failed', reason: 'expired' }) as never,
        ),
      close: () => Promise.resolve(),
    };
    const deps: SweepDeps<unknown> = { client, store: h.store, actions: new Map(), now: () => now };
    const options = { batchSize: 5, concurrency: 2, timeBudgetMs: 60_000 };
    const run = startRun(deps, resolveSweepOptions(options), options);

    await checkDueAttempts(run);
    run.committer.flush();
    await Promise.all(run.applying);

    expect({ reads: run.report.reads, failed: run.report.failed }).toEqual({ reads: 12, failed: 8 });
    expect([...run.readThisRun].sort()).toEqual([...stillPending].sort());
  });
});
