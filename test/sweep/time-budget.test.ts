/**
 * A sweep run within its time budget (`timeBudgetMs`): a read the run started gets a real
 * deadline for its fulfilment (the run stops starting reads while enough of the budget is left to
 * finish them), and a run that ends on its budget still delivers outcome events, so under a steady
 * backlog an event never waits for the backlog to clear. Same suites on every store.
 */
import { describe, expect, it } from 'vitest';
import type { OutcomeEvent } from '../../middleware/types.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import { deliveryStop } from '../../middleware/sweep/time-budget.ts';
import { describeEachStore } from '../support/stores.ts';
import { sweepDeps, useSweepEmulator, verifiedAttempts } from '../support/sweep-bench.ts';
import { useSweepSuite } from '../support/sweep-suite.ts';

const emu = useSweepEmulator();

describeEachStore('a sweep run within its time budget', (kind) => {
  const suite = useSweepSuite(emu, kind);

  it('fulfils every verified attempt it read, up to the end of its budget: none fails for want of time', async () => {
    const h = await suite.open();
    const verifyClient = suite.client;
    await verifiedAttempts(emu, h.store, verifyClient, 40);
    // Slow reads: the run is still reading when its 400 ms run out.
    await emu.control.injectFaults({ statusDelayMs: 60 });
    const report = await runSweep(sweepDeps(h, h.store, verifyClient, 'sweep'), { timeBudgetMs: 400, concurrency: 8 });
    expect(report.stoppedBy).toBe('time_budget');
    expect(report.reads).toBeGreaterThan(0);
    expect(report, JSON.stringify(report)).toMatchObject({ errors: 0, fulfilled: report.reads });
    expect(report.fulfilled + report.released).toBe(40);
    expect(await h.countEffects()).toBe(report.fulfilled);
  });

  it('a run that ends on its budget still delivers the outcome events it recorded', async () => {
    const h = await suite.open();
    const verifyClient = suite.client;
    await verifiedAttempts(emu, h.store, verifyClient, 40);
    await emu.control.injectFaults({ statusDelayMs: 60 });
    const delivered: OutcomeEvent[] = [];
    const deps = {
      ...sweepDeps(h, h.store, verifyClient, 'sweep'),
      onOutcome: (e: OutcomeEvent) => void delivered.push(e),
    };
    const report = await runSweep(deps, { timeBudgetMs: 400, concurrency: 8 });
    expect(report.stoppedBy).toBe('time_budget');
    expect(report.fulfilled).toBeGreaterThan(0);
    expect(report.outcomesDelivered, JSON.stringify(report)).toBe(report.fulfilled);
    expect(delivered).toHaveLength(report.fulfilled);
  });
});

describe('outcome delivery at the end of a budget', () => {
  // The runs above rarely reach delivery after their budget ended; the rule itself, pinned here.
  it('claims its first batch even when the budget already ran out, then stops; a signal stops it at once', () => {
    const ended = performance.now() - 1;
    const afterBudget = deliveryStop(ended, undefined);
    expect([afterBudget(), afterBudget()]).toEqual([false, true]);
    const withinBudget = deliveryStop(performance.now() + 60_000, undefined);
    expect([withinBudget(), withinBudget(), withinBudget()]).toEqual([false, false, false]);
    const stopped = new AbortController();
    stopped.abort();
    expect(deliveryStop(ended, stopped.signal)()).toBe(true);
  });
});
