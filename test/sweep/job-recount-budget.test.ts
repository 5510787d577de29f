/**
 * A `--once` run's last step counts, for the SMS pumping rules, the verified texts whose count
 * failed (countFulfilledSends, under hookTimeouts.limits: 5 s). The job fails a run still going
 * past twice its time budget and the stop timeout, as a runSweep that never settles, so the recount
 * is bounded by what is left of the run's budget: with a small budget, a slow recount is given up
 * (counted again by a later run) and the run prints its line and exits 0, never sweep_failed.
 * Driven by fake timers: the recount's slowness, the budget and the job's deadline are the test's clock.
 */
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { createVerifyClient } from '../../middleware/client/client.ts';
import { callsThrough } from '../../middleware/store/calls-through.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import { runSweepJob, SweepJobExitCode } from '../../middleware/sweep/sweep-job.ts';
import { jobKit } from '../support/sweep-bench.ts';

const RECOUNT_MS = 1_000;

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

it('--once with a 0.1 s budget, no stop timeout and a recount of verified texts taking 1 s: the run ends within its budget and finishing time, prints its sweep line and exits 0', async () => {
  const sqlite = createSqliteStore({ database: ':memory:' });
  const recounts: number[] = [];
  // The store's recount answers after a second (a large table, a busy database): well inside hookTimeouts.limits.
  const store = callsThrough(sqlite, (name, call) => {
    if (name !== 'pumping.countFulfilledSends') return call();
    recounts.push(performance.now());
    return new Promise((resolve) => setTimeout(resolve, RECOUNT_MS)).then(call);
  });
  const client = createVerifyClient({ baseUrl: 'http://127.0.0.1:9', clientId: 'c', clientSecret: 'test-secret' });
  const logged: string[] = [];
  const logger = { info() {}, warn: (_: unknown, message: string) => void logged.push(message), error() {} };
  const out: string[] = [];
  const startedAt = performance.now();
  let endedAt: number | undefined;
  const job = runSweepJob({
    kit: jobKit({ client, clientId: 'c', store, actions: new Map(), now: Date.now }),
    argv: ['--once', '--time-budget-seconds', '0.1'],
    env: {},
    print: (line) => out.push(line),
    handleSignals: false,
    stopTimeoutMs: 0,
    logger,
  }).finally(() => (endedAt = performance.now()));
  for (let ms = 0; ms < 2 * RECOUNT_MS && endedAt === undefined; ms += 10) await vi.advanceTimersByTimeAsync(10);
  const code = await job;
  await client.close();
  await sqlite.close();

  expect(recounts).toHaveLength(1);
  const lines = out.map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(lines).toEqual([expect.objectContaining({ event: 'sweep', mode: 'once', errors: 0 })]);
  expect(code).toBe(SweepJobExitCode.Ok);
  // Its budget and the finishing half of it: before the job's own deadline (0.2 s) and the recount's answer.
  expect(endedAt! - startedAt).toBeLessThanOrEqual(150 + 10);
  expect(logged).toContain('could not count the verified texts of fulfilled attempts for the SMS pumping rules');
});
