/**
 * A sweep run within its time budget (`timeBudgetMs`): it stops starting reads when its reading
 * time is over and hands back the claims it did not start; a read the run started gets a real
 * deadline for its fulfilment (the run stops starting reads while enough of the budget is left to
 * finish them), and a run that ends on its budget still delivers outcome events, so under a steady
 * backlog an event never waits for the backlog to clear. Same suites on every store.
 *
 * The budget runs on a test clock (the deps' `monotonicNow`) that each status read moves on as it
 * answers: what a run does with its budget is exact, whatever the machine's load.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { OutcomeEvent, VerifyClient } from '../../middleware/types.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import { deliveryStop, readsCutOff } from '../../middleware/sweep/time-budget.ts';
import { describeEachStore } from '../support/stores.ts';
import { sweepDeps, useSweepEmulator, verifiedAttempts } from '../support/sweep-bench.ts';
import { useSweepSuite } from '../support/sweep-suite.ts';

const emu = useSweepEmulator();

/** A run's budget clock that stands still until a status read answers, then moves on by `readMs`. */
function readsMoveTheClock(real: Pick<VerifyClient, 'getSession'>, readMs: number) {
  let t = 0;
  return {
    monotonicNow: () => t,
    client: {
      getSession: async (sessionId: string) => {
        try {
          return await real.getSession(sessionId);
        } finally {
          t += readMs;
        }
      },
    },
  };
}

describeEachStore('a sweep run within its time budget', (kind) => {
  const suite = useSweepSuite(emu, kind);

  it('stops starting reads when its reading time is over and hands back the claims it did not start', async () => {
    const h = await suite.open();
    await verifiedAttempts(emu, h.store, suite.client, 8);
    // A 60 s budget keeps its last 10 s (the fulfil timeout) for finishing: reads start until 50 s.
    // One read at a time, 12.5 s each: reads start at 0, 12.5, 25 and 37.5 s; at 50 s (to the
    // millisecond) none starts.
    const clock = readsMoveTheClock(suite.client, 12_500);
    const deps = { ...sweepDeps(h, h.store, suite.client, 'sweep'), ...clock };
    const report = await runSweep(deps, { batchSize: 8, concurrency: 1, timeBudgetMs: 60_000 });
    expect(report).toMatchObject({
      stoppedBy: 'time_budget',
      claimed: 8,
      reads: 4,
      fulfilled: 4,
      released: 4,
      errors: 0,
      durationMs: 50_000,
    });
    expect(await h.countEffects()).toBe(4);
    // Nothing stays leased: another worker takes the rest at once.
    const rest = await runSweep(sweepDeps(h, h.store, suite.client, 'sweep'), { owner: 'another-worker' });
    expect(rest).toMatchObject({ claimed: 4, fulfilled: 4, stoppedBy: null });
    expect(await h.countEffects()).toBe(8);
  });

  it('fulfils every verified attempt it read, up to the end of its budget: none fails for want of time', async () => {
    const h = await suite.open();
    await verifiedAttempts(emu, h.store, suite.client, 40);
    // 3 s a read, 8 at a time: reads start until 50 s, and those still in flight answer after the
    // budget's 60 s, so their fulfilments run with the budget over.
    const clock = readsMoveTheClock(suite.client, 3_000);
    const deps = { ...sweepDeps(h, h.store, suite.client, 'sweep'), ...clock };
    const report = await runSweep(deps, { timeBudgetMs: 60_000, concurrency: 8 });
    expect(report.stoppedBy).toBe('time_budget');
    expect(report.durationMs, JSON.stringify(report)).toBeGreaterThan(60_000);
    expect(report, JSON.stringify(report)).toMatchObject({ errors: 0, fulfilled: report.reads });
    expect(report.fulfilled + report.released).toBe(40);
    expect(await h.countEffects()).toBe(report.fulfilled);
  });

  it('a run that ends on its budget still delivers the outcome events it recorded', async () => {
    const h = await suite.open();
    await verifiedAttempts(emu, h.store, suite.client, 40);
    const delivered: OutcomeEvent[] = [];
    // As above: delivery starts with the budget over.
    const clock = readsMoveTheClock(suite.client, 3_000);
    const deps = {
      ...sweepDeps(h, h.store, suite.client, 'sweep'),
      ...clock,
      onOutcome: (e: OutcomeEvent) => void delivered.push(e),
    };
    const report = await runSweep(deps, { timeBudgetMs: 60_000, concurrency: 8 });
    expect(report.stoppedBy).toBe('time_budget');
    expect(report.durationMs, JSON.stringify(report)).toBeGreaterThan(60_000);
    expect(report.fulfilled).toBeGreaterThan(0);
    expect(report.outcomesDelivered, JSON.stringify(report)).toBe(report.fulfilled);
    expect(delivered).toHaveLength(report.fulfilled);
  });
});

describe('outcome delivery at the end of a budget', () => {
  it('claims its first batch even when the budget already ran out, then stops; a signal stops it at once', () => {
    let t = 1_000;
    const clock = () => t;
    const afterBudget = deliveryStop(999, undefined, clock);
    expect([afterBudget(), afterBudget()]).toEqual([false, true]);
    const withinBudget = deliveryStop(2_000, undefined, clock);
    expect([withinBudget(), withinBudget(), withinBudget()]).toEqual([false, false, false]);
    // At the budget's end, to the millisecond.
    t = 2_000;
    expect(withinBudget()).toBe(true);
    const stopped = new AbortController();
    stopped.abort();
    expect(deliveryStop(999, stopped.signal, clock)()).toBe(true);
  });
});

describe("the run's cut-off of unanswered reads", () => {
  const budget = { readingMs: 60_000, finishingMs: 60_000 };

  it('passes a read through as it settles: its answer, or its own error', async () => {
    const cutOff = readsCutOff(performance.now(), budget);
    try {
      await expect(cutOff.race(Promise.resolve({ kind: 'pending' }))).resolves.toEqual({ kind: 'pending' });
      await expect(cutOff.race(Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    } finally {
      cutOff.end();
    }
  });

  it("keeps no read's answer once it settled: a run of 20 000 reads holds none of them", async () => {
    // With --expose-gc in a process of its own; racing each read against one promise pending for the
    // whole run (Promise.race) held all 20 000 (and 112 MB of heap at 200 000 reads).
    const fixture = fileURLToPath(new URL('../fixtures/cut-off-memory.ts', import.meta.url));
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', fixture, '20000'],
      {
        cwd: fileURLToPath(new URL('../..', import.meta.url)),
      },
    );
    expect(JSON.parse(stdout)).toEqual({ reads: 20_000, held: 0, gc: true });
  });
});
