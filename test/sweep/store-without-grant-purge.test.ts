/**
 * A custom store written before step-up grants were purged has a `stepUp` without
 * `purgeStaleGrants`. The method is optional: every sweep run still runs (expiry, retention,
 * checks, outcomes), deletes no grant, says so in its report, and warns once per store, not once
 * per run. A custom store's purge that throws or rejects (a stub left as "not implemented") is
 * housekeeping that failed: it is logged and counted, and the run fulfils what it reads all the
 * same; one that rejects after its deadline has that reason logged once. Same suite on every store
 * (the real store with those methods hidden or replaced).
 */
import { expect, it, vi } from 'vitest';
import type { VerifyStore } from '../../middleware/store/types.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import { describeEachStore } from '../support/stores.ts';
import { sweepDeps, useSweepEmulator, verifiedAttempts } from '../support/sweep-bench.ts';
import { useSweepSuite } from '../support/sweep-suite.ts';

const emu = useSweepEmulator();

/** The store with some of its step-up methods replaced (undefined: the method is absent). */
function withStepUp(store: VerifyStore<unknown>, replaced: Record<string, unknown>): VerifyStore<unknown> {
  const stepUp = store.stepUp;
  const customStepUp =
    stepUp === undefined
      ? undefined
      : new Proxy(stepUp, {
          get: (target, key) => {
            if (typeof key === 'string' && Object.hasOwn(replaced, key)) return replaced[key];
            const value: unknown = Reflect.get(target, key, target);
            return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
          },
          has: (target, key) =>
            typeof key === 'string' && Object.hasOwn(replaced, key)
              ? replaced[key] !== undefined
              : Reflect.has(target, key),
        });
  return new Proxy(store, {
    get: (target, key) => {
      if (key === 'stepUp') return customStepUp;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** The store as a custom store written against the earlier StepUpStore: no purgeStaleGrants. */
function withoutGrantPurge(store: VerifyStore<unknown>): VerifyStore<unknown> {
  return withStepUp(store, { purgeStaleGrants: undefined });
}

function recordingLogger() {
  const warnings: string[] = [];
  const errors: string[] = [];
  const ignore = () => {};
  return {
    warnings,
    errors,
    logger: {
      info: ignore,
      warn: (_: unknown, message: string) => warnings.push(message),
      error: (fields: unknown, message: string) => errors.push(`${message} ${JSON.stringify(fields)}`),
    },
  };
}

describeEachStore('a sweep over a step-up store without purgeStaleGrants', (kind) => {
  const suite = useSweepSuite(emu, kind);

  it('runs every time, fulfils what is verified, reports the purge skipped, and warns once for the store', async () => {
    const h = await suite.open();
    await verifiedAttempts(emu, h.store, suite.client, 2);
    const store = withoutGrantPurge(h.store);
    const { warnings, logger } = recordingLogger();
    const deps = { ...sweepDeps(h, store, suite.client, 'sweep'), logger };
    const first = await runSweep(deps, { timeBudgetMs: 2000 });
    const second = await runSweep(deps, { timeBudgetMs: 2000 });
    expect(first).toMatchObject({ fulfilled: 2, grantsDeleted: 0, grantsPurgeSkipped: true });
    expect(second).toMatchObject({ fulfilled: 0, grantsDeleted: 0, grantsPurgeSkipped: true });
    expect(await h.countEffects()).toBe(2);
    expect(warnings.filter((message) => message.includes('purgeStaleGrants'))).toHaveLength(1);
  });

  it("the kit's own store purges: the report says the purge was not skipped", async () => {
    const h = await suite.open();
    const report = await runSweep(sweepDeps(h, h.store, suite.client, 'sweep'), { timeBudgetMs: 2000 });
    expect(report).toMatchObject({ grantsDeleted: 0, grantsPurgeSkipped: false });
  });

  it.each([
    [
      'throws',
      () => {
        throw new Error('not implemented');
      },
    ],
    ['rejects', () => Promise.reject(new Error('not implemented'))],
  ])(
    'a custom purge that %s: the run still fulfils what it reads, counts the failed purges and logs them',
    async (_, broken) => {
      const h = await suite.open();
      await verifiedAttempts(emu, h.store, suite.client, 2);
      const store = withStepUp(h.store, { purgeStaleGrants: broken, purgeExpiredIntents: broken });
      const { errors, logger } = recordingLogger();
      const report = await runSweep({ ...sweepDeps(h, store, suite.client, 'sweep'), logger }, { timeBudgetMs: 2000 });
      expect(report).toMatchObject({ fulfilled: 2, intentsDeleted: 0, grantsDeleted: 0, stepUpPurgeErrors: 2 });
      expect(await h.countEffects()).toBe(2);
      expect(errors.filter((line) => line.includes('not implemented'))).toHaveLength(2);
      expect(errors.some((line) => line.includes('stepUp.purgeStaleGrants'))).toBe(true);
    },
  );

  it('a custom purge that never settles: the run still fulfils what it reads within its time budget, and counts the purges as failed', async () => {
    const h = await suite.open();
    await verifiedAttempts(emu, h.store, suite.client, 2);
    const hangs = () => new Promise<number>(() => {});
    const store = withStepUp(h.store, { purgeStaleGrants: hangs, purgeExpiredIntents: hangs });
    const { errors, logger } = recordingLogger();
    const report = await runSweep({ ...sweepDeps(h, store, suite.client, 'sweep'), logger }, { timeBudgetMs: 2000 });
    expect(report).toMatchObject({ fulfilled: 2, intentsDeleted: 0, grantsDeleted: 0, stepUpPurgeErrors: 2 });
    expect(await h.countEffects()).toBe(2);
    expect(errors.some((line) => line.includes('stepUp.purgeExpiredIntents'))).toBe(true);
  });

  it('a custom purge that rejects after its deadline: the run went on without it, and the reason is logged once, naming it', async () => {
    const h = await suite.open();
    const failsLate = () =>
      new Promise<number>((_resolve, reject) => {
        setTimeout(() => reject(new Error('relation "step_up_intents" does not exist')), 600);
      });
    const store = withStepUp(h.store, { purgeExpiredIntents: failsLate });
    const { errors, logger } = recordingLogger();
    // A tenth of the budget: the purge is given up at 200 ms.
    const report = await runSweep({ ...sweepDeps(h, store, suite.client, 'sweep'), logger }, { timeBudgetMs: 2000 });
    expect(report.stepUpPurgeErrors).toBe(1);
    const late = () => errors.filter((line) => line.includes('does not exist'));
    await vi.waitFor(() => expect(late()).toHaveLength(1), { timeout: 3000 });
    expect(late()[0]).toContain('stepUp.purgeExpiredIntents rejected after its deadline');
    expect(late()[0]).not.toMatch(/at .*\.(ts|js):\d+/);
  });

  // A custom purge's undefined, "3" or { rows: 3 } went into the run's report and the job's JSON line as it was.
  it.each([
    ['undefined', undefined],
    ['a string', '3'],
    ['an object', { rows: 3 }],
    ['a negative number', -1],
    ['a fraction', 2.5],
  ])(
    'a custom purge that returns %s: counted as 0 deleted, the run goes on, and logged once for the store',
    async (_, returned) => {
      const h = await suite.open();
      await verifiedAttempts(emu, h.store, suite.client, 2);
      const odd = () => Promise.resolve(returned);
      const store = withStepUp(h.store, { purgeStaleGrants: odd, purgeExpiredIntents: odd });
      const { warnings, logger } = recordingLogger();
      const deps = { ...sweepDeps(h, store, suite.client, 'sweep'), logger };
      const first = await runSweep(deps, { timeBudgetMs: 2000 });
      const second = await runSweep(deps, { timeBudgetMs: 2000 });
      for (const report of [first, second])
        expect(report).toMatchObject({ intentsDeleted: 0, grantsDeleted: 0, stepUpPurgeErrors: 0 });
      expect(first.fulfilled).toBe(2);
      const notACount = warnings.filter((message) => message.includes('other than a count'));
      expect(notACount).toHaveLength(2);
      expect(notACount.some((message) => message.includes('stepUp.purgeExpiredIntents'))).toBe(true);
      expect(notACount.some((message) => message.includes('stepUp.purgeStaleGrants'))).toBe(true);
    },
  );
});
