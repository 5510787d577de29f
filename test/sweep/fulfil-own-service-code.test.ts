/**
 * A status read the service did not answer (`service_unavailable`) is read again after
 * `errorRetryMs` every time: the answer may come next time. A fulfilment that failed is read again
 * soon only in the attempt's first reads, then on its schedule, as each read is paid for. An
 * action's fulfil may throw a KitError `service_unavailable` of its own (its ledger's service is
 * down): that is the action failing, never the service unanswered, so its reads stay on the schedule.
 */
import { expect, it } from 'vitest';
import { KitError, KitErrorCode } from '../../middleware/errors.ts';
import { QUICK_RETRY_READS } from '../../middleware/sweep/schedule.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import { ACTION, useSweepBench, type Bench } from '../support/sweep-bench.ts';
import { createTestClock } from '../support/clock.ts';

const { emu, openBench } = useSweepBench();
const ERROR_RETRY_MS = 30_000;

it("an action's own service_unavailable: read again soon only in the first reads, then on the schedule", async () => {
  const clock = createTestClock();
  const b: Bench = await openBench(clock.now);
  const [attempt] = await b.createAttempts(1);
  await emu.control.completeSession(attempt!.sessionId, 'verified');
  const fulfil = () => {
    throw new KitError(KitErrorCode.ServiceUnavailable, 'the ledger service did not answer');
  };
  const actions = new Map([[ACTION, { ...b.deps.actions.get(ACTION)!, fulfil }]]);
  const deps = { ...b.deps, actions };
  const gaps: number[] = [];
  let at = clock.now() + 4 * 60_000;
  for (let read = 0; read < QUICK_RETRY_READS + 2; read++) {
    const report = await clock.pinned(at, () => runSweep(deps, { errorRetryMs: ERROR_RETRY_MS, timeBudgetMs: 2000 }));
    expect(report).toMatchObject({ reads: 1, errors: 1, fulfilled: 0 });
    const stored = await b.deps.store.findAttemptBySessionId(attempt!.sessionId);
    gaps.push(stored!.nextCheckAt - at);
    at = stored!.nextCheckAt;
  }
  // The first reads after errorRetryMs, as any failed fulfilment's; the later ones on the schedule.
  expect(gaps.slice(0, QUICK_RETRY_READS)).toEqual(Array(QUICK_RETRY_READS).fill(ERROR_RETRY_MS));
  for (const gap of gaps.slice(QUICK_RETRY_READS)) expect(gap).toBeGreaterThan(ERROR_RETRY_MS);
});
