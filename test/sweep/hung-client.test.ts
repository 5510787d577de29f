/**
 * A ready client the app passes (`client: myClient`, e.g. a wrapper adding metrics) is the app's
 * code: one whose status read never settles never holds a sweep run past its time budget, and the
 * attempt it was reading is read again by a later run.
 */
import { describe, expect, it } from 'vitest';
import type { VerifyClient } from '../../middleware/types.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import { useSweepBench, type Bench } from '../support/sweep-bench.ts';
import { createTestClock } from '../support/clock.ts';
import { within } from '../support/wait-for.ts';

const { emu, openBench } = useSweepBench();
let b: Bench | undefined;

describe('a ready client whose status read never settles', () => {
  it('cannot hold a run past its time budget; the others are read, and the hung one is read again later', async () => {
    const clock = createTestClock();
    b = await openBench(clock.now);
    const [stuck, other] = await b.createAttempts(2);
    for (const a of [stuck!, other!]) await emu.control.completeSession(a.sessionId, 'verified');
    const real = b.client;
    let hang = true;
    const client: VerifyClient = {
      createSession: (input, key) => real.createSession(input, key),
      getSession: (sessionId) =>
        hang && sessionId === stuck!.sessionId ? new Promise(() => {}) : real.getSession(sessionId),
      close: () => real.close(),
    };
    const started = performance.now();
    const report = await within(5000, runSweep({ ...b.deps, client }, { timeBudgetMs: 500, concurrency: 2 }));
    expect(performance.now() - started).toBeLessThan(2000);
    expect(report).toMatchObject({ fulfilled: 1, errors: 1, serviceReachable: true });
    expect((await b.attempt(other!.state)).outcome).toBe('fulfilled');
    // Read again later (a transient failure: after errorRetryMs, 30 s), once the client answers.
    hang = false;
    const later = await clock.shifted(31_000, () => runSweep({ ...b!.deps, client }, { timeBudgetMs: 500 }));
    expect(later.fulfilled).toBe(1);
    expect((await b.attempt(stuck!.state)).outcome).toBe('fulfilled');
  });
});
