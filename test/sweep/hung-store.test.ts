/**
 * A sweep run's store calls are the integrator's code, outside the kit's trust for liveness (a
 * custom store, or an app's pg Pool with no free connection, which waits for ever by default):
 * each runs under what is left of the run's time budget. One that never settles ends the run as
 * failed, the way a store error does, within its budget and finishing time; after it the run
 * marks, reschedules and releases nothing (its claims lapse with their lease), what the late call
 * does when it settles never becomes an unhandled rejection, and the worker carries on at its
 * interval. Same suites on every store.
 */
import { expect, it } from 'vitest';
import type { VerifyStore } from '../../middleware/store/types.ts';
import type { OutcomeEvent } from '../../middleware/types.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import { startSweepWorker } from '../../middleware/sweep/worker.ts';
import { describeEachStore, type StoreUnderTest } from '../support/stores.ts';
import { CLIENT_SECRET, sweepDeps, useSweepEmulator, verifiedAttempts } from '../support/sweep-bench.ts';
import { useSweepSuite } from '../support/sweep-suite.ts';
import { watchUnhandledRejections } from '../support/unhandled.ts';
import { nextTurn, waitFor, within } from '../support/wait-for.ts';

const emu = useSweepEmulator();
const unhandled = watchUnhandledRejections();
const OWNER = 'hung-store-sweep';

type RealCall = (...args: unknown[]) => Promise<unknown>;

const never = (): Promise<never> => new Promise(() => {});
/** A promise the test settles itself (`open()`), in place of a call that answers after some sleep. */
function gate(): Promise<void> & { open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return Object.assign(opened, { open });
}

/** The store with one call (`stepUp.x` for the step-up store's) made through `replace`, which gets the real one. */
function replacing<T extends object>(
  target: T,
  call: string,
  replace: (real: RealCall, args: unknown[]) => unknown,
): T {
  const [head, rest] = call.split(/\.(.*)/) as [string, string | undefined];
  return new Proxy(target, {
    get(object, key) {
      const value: unknown = Reflect.get(object, key, object);
      if (key !== head) return typeof value === 'function' ? (value as RealCall).bind(object) : value;
      if (rest !== undefined && rest !== '') return replacing(value as object, rest, replace);
      const real = (...args: unknown[]) => (value as RealCall).apply(object, args);
      return (...args: unknown[]) => replace(real, args);
    },
  });
}

/** Attempts by outcome. */
async function outcomes(h: StoreUnderTest): Promise<Record<string, number>> {
  const rows = await h.query<{ outcome: string; n: number }>(
    'SELECT outcome, count(*) AS n FROM verify_kit_attempts GROUP BY outcome',
  );
  return Object.fromEntries(rows.map((r) => [r.outcome, Number(r.n)]));
}

/** Who holds each attempt's claim (null: nobody). */
async function leaseOwners(h: StoreUnderTest): Promise<(string | null)[]> {
  const rows = await h.query<{ lease_owner: string | null }>('SELECT lease_owner FROM verify_kit_attempts');
  return rows.map((r) => r.lease_owner);
}

describeEachStore('a sweep run whose store call never settles', (kind) => {
  const suite = useSweepSuite(emu, kind);

  // The calls a run makes before its first read: the run fails, nothing is read or marked. (A step-up
  // purge that hangs is housekeeping given up on its own: store-without-grant-purge.test.ts.)
  it.each(['expireAttempts', 'applyRetention', 'claimDueAttempts', 'updateSweepPace'])(
    '%s never settles: runSweep with timeBudgetMs 500 ends within 5 s as failed, and the attempts stay pending',
    async (call) => {
      const h = await suite.open();
      await verifiedAttempts(emu, h.store, suite.client, 2);
      const store = replacing(h.store, call, never);
      const run = runSweep(sweepDeps(h, store, suite.client, 'sweep'), { timeBudgetMs: 500, owner: OWNER });
      await expect(within(5000, run)).rejects.toThrow(`${call} did not settle within`);
      expect(await outcomes(h)).toEqual({ pending: 2 });
      expect(await h.countEffects()).toBe(0);
      expect(await unhandled.settled()).toEqual([]);
    },
  );

  it('a fulfilment commit that never settles: the run ends within 5 s with the attempts counted as errors and still pending, and reschedules and releases nothing after it (the claims lapse)', async () => {
    const h = await suite.open();
    await verifiedAttempts(emu, h.store, suite.client, 2);
    const writesAfter: string[] = [];
    const counted = (call: string) => (real: RealCall, args: unknown[]) => {
      writesAfter.push(call);
      return real(...args);
    };
    const store = replacing(
      replacing(replacing(h.store, 'fulfilBatch', never), 'scheduleNextChecks', counted('scheduleNextChecks')),
      'releaseClaims',
      counted('releaseClaims'),
    );
    const run = runSweep(sweepDeps(h, store, suite.client, 'sweep'), { timeBudgetMs: 500, owner: OWNER });
    const report = await within(5000, run);
    expect(report).toMatchObject({ claimed: 2, reads: 2, fulfilled: 0 });
    expect(report.errors).toBeGreaterThanOrEqual(2);
    expect(writesAfter).toEqual([]);
    expect(await outcomes(h)).toEqual({ pending: 2 });
    expect(await leaseOwners(h)).toEqual([OWNER, OWNER]);
    expect(await h.countEffects()).toBe(0);
    expect(await unhandled.settled()).toEqual([]);
  });

  it('the SMS pumping count of a verified text never settles: the run ends within 5 s with the attempt counted as an error and still pending', async () => {
    const h = await suite.open();
    await verifiedAttempts(emu, h.store, suite.client, 1);
    const store = replacing(h.store, 'pumping.markVerified', never);
    const run = runSweep(sweepDeps(h, store, suite.client, 'sweep'), { timeBudgetMs: 500, owner: OWNER });
    const report = await within(5000, run);
    expect(report).toMatchObject({ claimed: 1, reads: 1, fulfilled: 0 });
    expect(report.errors).toBeGreaterThanOrEqual(1);
    expect(await outcomes(h)).toEqual({ pending: 1 });
    expect(await h.countEffects()).toBe(0);
    expect(await unhandled.settled()).toEqual([]);
  });

  it('a claim answered after its deadline: the run has already failed, nothing releases what it claimed (the claims lapse with the lease), and no rejection goes unhandled', async () => {
    const h = await suite.open();
    await verifiedAttempts(emu, h.store, suite.client, 2);
    // The claim answers when the test says, once the run has failed: after its deadline, by no sleep.
    const deadlinePassed = gate();
    let lateClaim: Promise<unknown> | undefined;
    const releases: unknown[] = [];
    const store = replacing(
      replacing(h.store, 'claimDueAttempts', (real, args) => (lateClaim = deadlinePassed.then(() => real(...args)))),
      'releaseClaims',
      (real, args) => releases.push(args) && real(...args),
    );
    const run = runSweep(sweepDeps(h, store, suite.client, 'sweep'), { timeBudgetMs: 500, owner: OWNER });
    await expect(within(5000, run)).rejects.toThrow('claimDueAttempts did not settle within');
    deadlinePassed.open();
    await lateClaim;
    await nextTurn();
    expect(releases).toEqual([]);
    expect(await leaseOwners(h)).toEqual([OWNER, OWNER]);
    expect(await outcomes(h)).toEqual({ pending: 2 });
    expect(await unhandled.settled()).toEqual([]);
  });

  it('a claim that rejects after its deadline: the run has already failed, its reason is logged once naming the call, and the late rejection is never unhandled', async () => {
    const h = await suite.open();
    await verifiedAttempts(emu, h.store, suite.client, 1);
    const deadlinePassed = gate();
    const store = replacing(h.store, 'claimDueAttempts', () =>
      deadlinePassed.then(() => Promise.reject(new Error(`Connection terminated unexpectedly (${CLIENT_SECRET})`))),
    );
    const errors: string[] = [];
    const logger = {
      info() {},
      warn() {},
      error: (obj: object, msg?: string) => errors.push(`${msg} ${JSON.stringify(obj)}`),
    };
    const run = runSweep(
      { ...sweepDeps(h, store, suite.client, 'sweep'), logger },
      { timeBudgetMs: 500, owner: OWNER },
    );
    await expect(within(5000, run)).rejects.toThrow('claimDueAttempts did not settle within');
    deadlinePassed.open();
    await nextTurn();
    const late = errors.filter((line) => line.includes('Connection terminated'));
    expect(late).toHaveLength(1);
    expect(late[0]).toContain('store.claimDueAttempts rejected after its deadline');
    expect(late[0]).not.toContain(CLIENT_SECRET);
    expect(late[0]).not.toMatch(/at .*\.(ts|js):\d+/);
    expect(await unhandled.settled()).toEqual([]);
  });

  it('an outcome-event claim that never settles: the run ends within 5 s as failed; what it fulfilled stays fulfilled, and a later run delivers the events', async () => {
    const h = await suite.open();
    await verifiedAttempts(emu, h.store, suite.client, 2);
    const delivered: OutcomeEvent[] = [];
    const deps = {
      ...sweepDeps(h, h.store, suite.client, 'sweep'),
      onOutcome: (e: OutcomeEvent) => void delivered.push(e),
    };
    const store = replacing(h.store, 'claimOutcomeEvents', never);
    const run = runSweep({ ...deps, store }, { timeBudgetMs: 500 });
    await expect(within(5000, run)).rejects.toThrow('claimOutcomeEvents did not settle within');
    expect(await outcomes(h)).toEqual({ fulfilled: 2 });
    expect(delivered).toEqual([]);
    const later = await runSweep(deps, { timeBudgetMs: 500 });
    expect(later.outcomesDelivered).toBe(2);
    expect(delivered).toHaveLength(2);
    expect(await h.countEffects()).toBe(2);
  });

  it('a claim that never settles on the first run: the worker reports that run as failed, and its next run fulfils the verified attempts', async () => {
    const h = await suite.open();
    await verifiedAttempts(emu, h.store, suite.client, 2);
    let claims = 0;
    const store: VerifyStore<unknown> = replacing(h.store, 'claimDueAttempts', (real, args) =>
      ++claims === 1 ? never() : real(...args),
    );
    const errors: unknown[] = [];
    const worker = startSweepWorker(sweepDeps(h, store, suite.client, 'sweep'), {
      intervalMs: 50,
      timeBudgetMs: 300,
      stopTimeoutMs: 200,
      onError: (error) => errors.push(error),
    });
    try {
      // The run's fulfilments commit before it ends (its claims released, its pace kept): waited on both.
      await waitFor(
        async () => (await h.countEffects()) === 2 && worker.runs > 0,
        5000,
        'the next run to fulfil and end',
      );
      expect(worker.runs).toBeGreaterThan(0);
      expect(errors).toHaveLength(1);
      expect(String(errors[0])).toContain('claimDueAttempts did not settle within');
    } finally {
      await worker.stop();
    }
  });
});
