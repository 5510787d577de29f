/**
 * A sweep run's fulfilment on an async (PostgreSQL) store near the end of its time: the store call
 * that runs the action's `fulfil` is cut at the store's end of the run, so the action's own
 * deadline must answer first. Then an action still running rolls back with its transaction and
 * the run says so truthfully (nothing was marked, a later run fulfils it once), and an action that
 * answers within its deadline commits and is reported fulfilled: never a cut store call whose
 * transaction commits afterwards while the run reports it failed and ends with sweep_failed.
 * Driven by fake timers: the budget, the action's slowness and the deadlines are the test's clock.
 */
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { callFulfil } from '../../middleware/fulfil/call-fulfil.ts';
import type { Attempt, FulfilRequest, FulfilSettlement, VerifyStore } from '../../middleware/store/types.ts';
import type { SweepDeps } from '../../middleware/sweep/sweep-report.ts';
import { runBudget, withinBudget } from '../../middleware/sweep/time-budget.ts';
import type { ActionDefinition } from '../../middleware/types.ts';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A store whose transactions are async as PostgreSQL's: the action runs inside, then the mark
 * commits; an action that throws or is late rolls the whole transaction back. The store keeps
 * going after the kit stopped waiting, as a real database does.
 */
function asyncStore() {
  const committed: string[] = [];
  const released: string[] = [];
  const store = {
    synchronousTransactions: false,
    async fulfilBatch(requests: readonly FulfilRequest<unknown>[]): Promise<FulfilSettlement[]> {
      const settlements: FulfilSettlement[] = [];
      for (const request of requests) {
        await request.effect('tx', request.attempt);
        settlements.push({
          ok: true,
          result: { kind: 'fulfilled', attempt: request.attempt, superseded: [], eventIds: [] },
        });
      }
      committed.push(...requests.map((r) => r.attempt.sessionId));
      return settlements;
    },
    releaseClaims(owner: string) {
      released.push(owner);
      return Promise.resolve(0);
    },
  };
  return { store: store as unknown as VerifyStore<unknown>, committed, released };
}

/** A run of a 60 s budget (its finishing share 10 s, the default fulfil timeout), started now. */
function runOf(store: VerifyStore<unknown>) {
  const startedAt = performance.now();
  const deps = { store, hookTimeouts: undefined } as unknown as SweepDeps<unknown>;
  return { startedAt, bounded: withinBudget(deps, startedAt, runBudget(60_000, undefined), () => performance.now()) };
}

/** The sweep's fulfilment of one attempt whose action takes `actionMs`: as fulfil.ts asks the store. */
function fulfilment(bounded: SweepDeps<unknown>, actionMs: number) {
  const action = { name: 'upgrade', fulfil: () => sleep(actionMs) } as unknown as ActionDefinition<unknown>;
  const request: FulfilRequest<unknown> = {
    attempt: { sessionId: 'ses_1' } as Attempt,
    effect: (tx, stored) =>
      callFulfil(action, tx, stored as never, { synchronous: false, deadlineMs: bounded.hookTimeouts?.fulfil ?? 0 }),
    now: Date.now(),
  };
  return bounded.store.fulfilBatch([request]);
}

/** Waits for `call` on the test clock; its value or its error, and when it came (ms into the run). */
async function settle<T>(call: Promise<T>, startedAt: number) {
  let done = false;
  const outcome = call.then(
    (value) => ({ ok: true as const, value, at: performance.now() - startedAt }),
    (error: unknown) => ({ ok: false as const, error, at: performance.now() - startedAt }),
  );
  void outcome.then(() => (done = true));
  for (let ms = 0; ms < 30_000 && !done; ms += 100) await vi.advanceTimersByTimeAsync(100);
  return outcome;
}

it('a fulfilment whose store call starts at the end of the budget (60 s) and whose action takes 9.5 s commits and is reported fulfilled', async () => {
  const { store, committed } = asyncStore();
  const { startedAt, bounded } = runOf(store);
  await vi.advanceTimersByTimeAsync(60_000);
  const settled = await settle(fulfilment(bounded, 9_500), startedAt);
  expect(settled.ok).toBe(true);
  expect(committed).toEqual(['ses_1']);
});

it("a fulfilment whose store call starts 69 s into a 60 s budget: the action's own deadline answers before the store's end (78 s), so it rolls back, is reported as not marked, and the store is still there for the run's last writes", async () => {
  const { store, committed, released } = asyncStore();
  const { startedAt, bounded } = runOf(store);
  await vi.advanceTimersByTimeAsync(69_000);
  // The action answers at 78.5 s: within a 10 s deadline, past the store's end.
  const settled = await settle(fulfilment(bounded, 9_500), startedAt);
  // Not given up: the run still releases its claims, so a later run reads the attempt again.
  const release = bounded.store.releaseClaims('owner').then(
    () => 'released',
    (error: unknown) => String(error),
  );
  // Long after: what the run is told is what the store did, a call it gave up never commits afterwards.
  await vi.advanceTimersByTimeAsync(10_000);
  expect({ ok: settled.ok, committed }).toEqual({ ok: false, committed: [] });
  expect(settled.ok ? undefined : String(settled.error)).toMatch(/fulfil/);
  expect(settled.ok ? undefined : String(settled.error)).not.toMatch(/the run ends/);
  expect(settled.at).toBeLessThan(78_000);
  expect(await release).toBe('released');
  expect(released).toEqual(['owner']);
});
