/**
 * A sweep run's delivery of outcome events near the end of its time: the store call that marks an
 * event delivered (or due again) is not made past the store's end of the run, so `onOutcome`'s own
 * deadline must answer first. A hook that is slow but within its deadline then never ends a run
 * with sweep_failed: cut before that end, it is delivered again later, and the run goes on.
 * Driven by fake timers: the budget, the hook's slowness and the deadlines are the test's clock.
 */
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { deliverOutcomeEvents } from '../../middleware/fulfil/outcomes.ts';
import type { Attempt, StoredOutcomeEvent, VerifyStore } from '../../middleware/store/types.ts';
import type { SweepDeps } from '../../middleware/sweep/sweep-report.ts';
import { runBudget, withinBudget } from '../../middleware/sweep/time-budget.ts';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** A store holding one undelivered event; it says what became of it. */
function storeWithOneEvent() {
  const became: string[] = [];
  const event = {
    eventId: 'evt_1',
    outcome: 'fulfilled',
    source: 'sweep',
    occurredAt: Date.now(),
    deliveries: 1,
    attempt: { sessionId: 'ses_1', userRef: 'u1', action: 'upgrade', destination: null } as unknown as Attempt,
  } satisfies StoredOutcomeEvent;
  const store = {
    claimOutcomeEvents: () => Promise.resolve([event]),
    markOutcomeEventDelivered: () => Promise.resolve(void became.push('delivered')),
    retryOutcomeEvent: () => Promise.resolve(void became.push('due again')),
  };
  return { store: store as unknown as VerifyStore<unknown>, became };
}

it("an onOutcome of 9.5 s whose batch is claimed 69 s into a 60 s budget answers before the store's end (78 s): the event is due again and the run goes on, never a store call refused", async () => {
  const { store, became } = storeWithOneEvent();
  const onOutcome = () => new Promise<void>((resolve) => setTimeout(resolve, 9_500));
  const startedAt = performance.now();
  const deps = { store, onOutcome, now: Date.now, hookTimeouts: undefined } as unknown as SweepDeps<unknown>;
  const bounded = withinBudget(deps, startedAt, runBudget(60_000, undefined), () => performance.now());
  await vi.advanceTimersByTimeAsync(69_000);
  const delivery = deliverOutcomeEvents(bounded, { owner: 'o', leaseMs: 60_000, limit: 10 }).then(
    (counts) => counts,
    (error: unknown) => String(error),
  );
  await vi.advanceTimersByTimeAsync(20_000);
  expect(await delivery).toEqual({ delivered: 0, failed: 1 });
  expect(became).toEqual(['due again']);
});
