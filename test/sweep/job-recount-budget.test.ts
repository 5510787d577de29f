/**
 * A `--once` run's last step counts, for the SMS pumping rules, the verified texts whose count
 * failed (countFulfilledSends, under hookTimeouts.limits: 5 s). The job fails a run still going
 * past twice its time budget and the stop timeout, as a runSweep that never settles, so the recount
 * ends with the run's budget and its finishing share: with a small budget, a slow recount is given
 * up, and one with no time left waits (a later run counts it); the run prints its line and exits 0,
 * never sweep_failed. A store too slow for the run ends it before that deadline, naming its call.
 * Driven by fake timers: the store's slowness, the budget and the job's deadline are the test's clock.
 */
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { createVerifyClient } from '../../middleware/client/client.ts';
import { callsThrough } from '../../middleware/store/calls-through.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import { runSweepJob, SweepJobExitCode } from '../../middleware/sweep/sweep-job.ts';
import { runBudget, storeWithinBudget } from '../../middleware/sweep/time-budget.ts';
import { jobKit } from '../support/sweep-bench.ts';

/** The job's flags: a 0.1 s budget, whose finishing share is 0.05 s, and the job's deadline 0.2 s. */
const ONCE_IN_A_TENTH = ['--once', '--time-budget-seconds', '0.1'];
const STEP_MS = 10;

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** One `--once` job, no stop timeout, on an empty store whose calls each answer after `callMs` (the recount after `recountMs`). */
async function runOnce({ callMs, recountMs }: { callMs: number; recountMs: number }) {
  const sqlite = createSqliteStore({ database: ':memory:' });
  const recounts: number[] = [];
  const store = callsThrough(sqlite, (name, call) => {
    if (name === 'pumping.countFulfilledSends') recounts.push(performance.now());
    const ms = name === 'pumping.countFulfilledSends' ? recountMs : callMs;
    return ms === 0 ? call() : new Promise((resolve) => setTimeout(resolve, ms)).then(call);
  });
  const client = createVerifyClient({ baseUrl: 'http://127.0.0.1:9', clientId: 'c', clientSecret: 'test-secret' });
  const logged: string[] = [];
  const logger = { info() {}, warn: (_: unknown, message: string) => void logged.push(message), error() {} };
  const out: string[] = [];
  const startedAt = performance.now();
  let endedAt: number | undefined;
  const job = runSweepJob({
    kit: jobKit({ client, clientId: 'c', store, actions: new Map(), now: Date.now }),
    argv: ONCE_IN_A_TENTH,
    env: {},
    print: (line) => out.push(line),
    handleSignals: false,
    stopTimeoutMs: 0,
    logger,
  }).finally(() => (endedAt = performance.now()));
  for (let ms = 0; ms < 5_000 && endedAt === undefined; ms += STEP_MS) await vi.advanceTimersByTimeAsync(STEP_MS);
  const code = await job;
  await client.close();
  await sqlite.close();
  const lines = out.map((line) => JSON.parse(line) as Record<string, unknown>);
  return { code, lines, tookMs: endedAt! - startedAt, recountsAt: recounts.map((at) => at - startedAt), logged };
}

it('--once with a 0.1 s budget, no stop timeout and a recount of verified texts taking 1 s: the run ends within its budget and finishing time, prints its sweep line and exits 0', async () => {
  // The store's recount answers after a second (a large table, a busy database): well inside hookTimeouts.limits.
  const run = await runOnce({ callMs: 0, recountMs: 1_000 });
  expect(run.recountsAt).toHaveLength(1);
  expect(run.lines).toEqual([expect.objectContaining({ event: 'sweep', mode: 'once', errors: 0 })]);
  expect(run.code).toBe(SweepJobExitCode.Ok);
  // Its budget and the finishing half of it: before the job's own deadline (0.2 s) and the recount's answer.
  expect(run.tookMs).toBeLessThanOrEqual(150 + STEP_MS);
  expect(run.logged).toContain('could not count the verified texts of fulfilled attempts for the SMS pumping rules');
});

it('--once with a 0.1 s budget on a store taking 80 ms a call: its steps end past its budget and finishing share (0.18 s), so the recount is left to a later run, and the run prints its sweep line and exits 0', async () => {
  const run = await runOnce({ callMs: 80, recountMs: 80 });
  expect(run.lines).toEqual([expect.objectContaining({ event: 'sweep', mode: 'once', errors: 0 })]);
  expect(run.code).toBe(SweepJobExitCode.Ok);
  expect(run.recountsAt).toEqual([]);
  expect(run.tookMs).toBeLessThan(200);
});

it("--once with a 0.1 s budget on a store taking 90 ms a call: its last call is given up before the job's deadline (0.2 s), and the sweep_failed line names that call, how far into the run and what lets a run finish, never a runSweep that never answers", async () => {
  // Expiry ends at 90 ms, the step-up purges at 110 ms; retention then cannot end by the store's end (190 ms).
  const run = await runOnce({ callMs: 90, recountMs: 90 });
  expect(run.lines).toEqual([
    {
      event: 'sweep_failed',
      error: {
        name: 'Error',
        message:
          "applyRetention did not settle within 80 ms (what was left of the sweep run's time for the store), 190 ms into the run; the run ends, its claims lapse with the lease (a larger time budget, or a faster store, lets a run finish)",
      },
    },
  ]);
  expect(run.code).toBe(SweepJobExitCode.SweepFailed);
  expect(run.tookMs).toBeLessThan(200);
});

it("a store call due after the store's end of the run (190 ms into a 0.1 s budget) is not made: it and every later call fail at once, naming the first", async () => {
  const sqlite = createSqliteStore({ database: ':memory:' });
  const made: string[] = [];
  const counted = callsThrough(sqlite, (name, call) => {
    made.push(name);
    return call();
  });
  let clock = 0;
  const store = storeWithinBudget(counted, 0, runBudget(100, undefined), () => clock);
  await expect(store.expireAttempts(Date.now(), 1_000)).resolves.toBe(0);
  clock = 190;
  const refused =
    "expireAttempts was not called: the sweep run's time for the store was over, 190 ms into the run; the run ends, its claims lapse with the lease (a larger time budget, or a faster store, lets a run finish)";
  await expect(store.expireAttempts(Date.now(), 1_000)).rejects.toThrow(refused);
  await expect(store.releaseClaims('owner')).rejects.toThrow(refused);
  expect(made).toEqual(['expireAttempts']);
  await sqlite.close();
});
