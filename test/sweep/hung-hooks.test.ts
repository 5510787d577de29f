/**
 * A hung integrator callback never stalls the sweep: onOutcome runs under its deadline (a late one
 * counts as failed and is delivered again later), `timeBudgetMs` bounds a run, and one user's stuck
 * hook never holds up the others' deliveries or the next run.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { OutcomeEvent } from '../../middleware/types.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import type { SweepReport } from '../../middleware/sweep/sweep-report.ts';
import { startSweepWorker, type SweepWorker } from '../../middleware/sweep/worker.ts';
import { useSweepBench, type Bench } from '../support/sweep-bench.ts';
import { waitFor, within } from '../support/wait-for.ts';

const { emu, openBench } = useSweepBench();
let b: Bench | undefined;
let worker: SweepWorker | undefined;
const never = () => new Promise<void>(() => {});

afterEach(async () => {
  await worker?.stop();
  worker = undefined;
});

describe('a hung onOutcome', () => {
  it('never stops the worker: a verified user who never came back is fulfilled by the next runs', async () => {
    b = await openBench();
    const [first, second] = await b.createAttempts(2);
    await emu.control.completeSession(first!.sessionId, 'verified');
    const heard: string[] = [];
    // Never settles on its first call (the hook), answers at once afterwards.
    const onOutcome = (event: OutcomeEvent) => {
      heard.push(event.sessionId);
      return heard.length === 1 ? never() : Promise.resolve();
    };
    worker = startSweepWorker({ ...b.deps, onOutcome }, { intervalMs: 50, timeBudgetMs: 500, backoffMs: [1000] });
    await waitFor(async () => (await b!.attempt(first!.state)).outcome === 'fulfilled', 5000, 'the first fulfilment');
    // The hook was really called, and its first call is the one that never settles.
    await waitFor(() => heard.length > 0, 5000, "the hook's first (hanging) call");
    expect(heard[0]).toBe(first!.sessionId);
    await emu.control.completeSession(second!.sessionId, 'verified');
    await waitFor(async () => (await b!.attempt(second!.state)).outcome === 'fulfilled', 6000, 'the second fulfilment');
    // Past the hung call, the worker still delivers: the second outcome reaches the hook.
    await waitFor(() => heard.includes(second!.sessionId), 6000, "the second outcome's delivery");
    expect(worker.runs).toBeGreaterThan(1);
  });

  it('cannot hold one run past its time budget (the `sweep --once` job returns)', async () => {
    b = await openBench();
    const attempts = await b.createAttempts(3);
    for (const a of attempts) await emu.control.completeSession(a.sessionId, 'verified');
    const heard: string[] = [];
    const hangs = (event: OutcomeEvent) => {
      heard.push(event.sessionId);
      return never();
    };
    const started = performance.now();
    const report = await within(3000, runSweep({ ...b.deps, onOutcome: hangs }, { timeBudgetMs: 500 }));
    expect(performance.now() - started).toBeLessThan(1500);
    expect(report.fulfilled).toBe(3);
    // The run did call the hook, which never settled: none of its outcomes counts as delivered.
    expect(heard.length).toBeGreaterThan(0);
    expect(attempts.map((a) => a.sessionId)).toEqual(expect.arrayContaining(heard));
    expect(report.outcomesDelivered).toBe(0);
  });

  it("never holds up another user's delivery, and a late one counts as failed and is delivered again later", async () => {
    let shift = 0;
    b = await openBench(() => Date.now() + shift);
    const attempts = await b.createAttempts(3);
    for (const a of attempts) await emu.control.completeSession(a.sessionId, 'verified');
    const stuck = attempts[0]!.sessionId;
    const heard: string[] = [];
    const onOutcome = (event: OutcomeEvent) => {
      heard.push(event.sessionId);
      return event.sessionId === stuck && heard.filter((id) => id === stuck).length === 1 ? never() : Promise.resolve();
    };
    const deps = { ...b.deps, onOutcome, hookTimeouts: { onOutcome: 300 } };
    const report: SweepReport = await within(3000, runSweep(deps, { timeBudgetMs: 60_000 }));
    expect(report).toMatchObject({ fulfilled: 3, outcomesDelivered: 2, outcomeDeliveryErrors: 1 });
    // Delivered again once its retry delay has passed.
    shift = 60_000;
    const later = await within(3000, runSweep(deps, { timeBudgetMs: 60_000 }));
    expect(later.outcomesDelivered).toBe(1);
    expect(heard.filter((id) => id === stuck)).toHaveLength(2);
  });
});
