/**
 * The in-process worker (startSweepWorker) over real HTTP against the emulator.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { isKitError } from '../../middleware/errors.ts';
import type { KitLogger } from '../../middleware/logger.ts';
import type { SweepReport } from '../../middleware/sweep/sweep-report.ts';
import { startSweepWorker, type SweepWorker } from '../../middleware/sweep/worker.ts';
import { countEffects, useSweepBench, type Bench } from '../support/sweep-bench.ts';
import { waitFor, within } from '../support/wait-for.ts';
import { sqliteLease } from '../support/stores.ts';

const { emu, openBench } = useSweepBench();
let b: Bench;
let worker: SweepWorker | undefined;

afterEach(async () => {
  await worker?.stop();
  worker = undefined;
});

function recordingLogger() {
  const entries: { level: string; obj: Record<string, unknown>; msg: string | undefined }[] = [];
  const logger: KitLogger = {
    info: (obj, msg) => entries.push({ level: 'info', obj, msg }),
    warn: (obj, msg) => entries.push({ level: 'warn', obj, msg }),
    error: (obj, msg) => entries.push({ level: 'error', obj, msg }),
  };
  return { entries, logger };
}

describe('startSweepWorker', () => {
  it('runs on its interval, one run at a time, and fulfils users who verify while it runs', async () => {
    b = await openBench();
    const attempts = await b.createAttempts(4);
    await emu.control.injectFaults({ statusDelayMs: 60 }); // each run takes longer than the interval
    let active = 0;
    let maxActive = 0;
    const store = b.store;
    const reports: SweepReport[] = [];
    worker = startSweepWorker(
      {
        ...b.deps,
        store: {
          ...store,
          expireAttempts: (now, maxAgeMs) => {
            // Every run starts with expiry: count the runs in progress.
            active++;
            maxActive = Math.max(maxActive, active);
            return store.expireAttempts(now, maxAgeMs);
          },
        },
      },
      {
        intervalMs: 10,
        concurrency: 1,
        // Read every pending attempt again on each run (a test-only schedule).
        backoffMs: [1000],
        onReport: (report) => {
          active--;
          reports.push(report);
        },
      },
    );
    await waitFor(() => reports.length >= 1, 5000, 'a first run');
    expect(reports[0]).toMatchObject({ claimed: 4, pending: 4 });
    for (const a of attempts) await emu.control.completeSession(a.sessionId, 'verified');
    await waitFor(() => countEffects(b.store.db) === 4, 10_000, 'the worker to fulfil all four');
    await worker.stop();
    expect(maxActive).toBe(1);
    expect(worker.runs).toBeGreaterThanOrEqual(2);
    for (const a of attempts) expect((await b.attempt(a.state)).outcome).toBe('fulfilled');
  });

  it('stop() is awaitable and idempotent: it stops claiming, lets the in-flight read finish, and releases the rest', async () => {
    b = await openBench();
    const attempts = await b.createAttempts(5);
    for (const a of attempts) await emu.control.completeSession(a.sessionId, 'verified');
    await emu.control.injectFaults({ statusDelayMs: 400 });
    const readsBefore = (await emu.control.stats()).statusReads;
    worker = startSweepWorker(b.deps, { intervalMs: 10, concurrency: 1, batchSize: 5 });
    await waitFor(async () => (await emu.control.stats()).statusReads > readsBefore, 5000, 'the first read');
    expect(worker.running).toBe(true);
    const first = worker.stop();
    const second = worker.stop();
    expect(second).toBe(first);
    await first;
    expect(worker.running).toBe(false);
    // Every read in flight when stop() was called completed its fulfilment; no more were started.
    const reads = (await emu.control.stats()).statusReads - readsBefore;
    expect(reads).toBeGreaterThanOrEqual(1);
    expect(reads).toBeLessThan(5);
    expect(countEffects(b.store.db)).toBe(reads);
    // The rest are not leased by anyone: another worker may take them at once.
    for (const a of attempts) expect(sqliteLease(b.store.db, a.sessionId).owner).toBeNull();
    // And nothing more is read after stop.
    await new Promise((r) => setTimeout(r, 150));
    expect((await emu.control.stats()).statusReads - readsBefore).toBe(reads);
    await worker.stop(); // a third call is still fine
  });

  it('stop() does not wait past stopTimeoutMs for a hung read, and still releases the claims', async () => {
    b = await openBench(Date.now, { headersMs: 20_000 });
    const attempts = await b.createAttempts(3);
    await emu.control.injectFaults({ statusDelayMs: 2000 });
    const readsBefore = (await emu.control.stats()).statusReads;
    const { entries, logger } = recordingLogger();
    worker = startSweepWorker(b.deps, { intervalMs: 10, concurrency: 1, stopTimeoutMs: 200, logger });
    await waitFor(async () => (await emu.control.stats()).statusReads > readsBefore, 5000, 'the first read');
    const startedStop = Date.now();
    await worker.stop();
    expect(Date.now() - startedStop).toBeLessThan(1000);
    for (const a of attempts) expect(sqliteLease(b.store.db, a.sessionId).owner).toBeNull();
    expect(entries.some((e) => e.level === 'warn' && /did not finish in time/.test(e.msg ?? ''))).toBe(true);
  });

  it('stop() does not wait past stopTimeoutMs for a store that never releases the claims, and logs that they lapse', async () => {
    b = await openBench();
    const { entries, logger } = recordingLogger();
    const store = { ...b.store, releaseClaims: () => new Promise<number>(() => {}) };
    worker = startSweepWorker({ ...b.deps, store }, { intervalMs: 10, stopTimeoutMs: 200, logger });
    await waitFor(() => worker!.runs > 0, 5000, 'a first run');
    const startedStop = performance.now();
    await within(5000, worker.stop());
    expect(performance.now() - startedStop).toBeLessThan(1000);
    expect(entries).toContainEqual({
      level: 'error',
      obj: { err: { name: 'Error', message: 'releaseClaims did not settle within 200 ms' } },
      msg: 'sweep worker: could not release claims; they lapse with the lease',
    });
  });

  it('a store that rejects the release after stopTimeoutMs: the claims lapse, and the reason is logged once after', async () => {
    b = await openBench();
    const { entries, logger } = recordingLogger();
    const releaseClaims = () =>
      new Promise<number>((_resolve, reject) => {
        setTimeout(() => reject(new Error('Connection terminated unexpectedly')), 400);
      });
    worker = startSweepWorker(
      { ...b.deps, store: { ...b.store, releaseClaims } },
      { intervalMs: 10, stopTimeoutMs: 200, logger },
    );
    await waitFor(() => worker!.runs > 0, 5000, 'a first run');
    await within(5000, worker.stop());
    const late = () => entries.filter((e) => JSON.stringify(e).includes('Connection terminated'));
    await waitFor(() => late().length > 0, 3000, 'the late rejection logged');
    expect(late()).toEqual([
      {
        level: 'error',
        obj: { hook: 'releaseClaims', err: { name: 'Error', message: 'Connection terminated unexpectedly' } },
        msg: 'releaseClaims rejected after its deadline',
      },
    ]);
  });

  it('logs a failed run and carries on at the next interval instead of crashing', async () => {
    b = await openBench();
    const [attempt] = await b.createAttempts(1);
    await emu.control.completeSession(attempt!.sessionId, 'verified');
    const { entries, logger } = recordingLogger();
    let claimCalls = 0;
    const store = b.store;
    const errors: unknown[] = [];
    worker = startSweepWorker(
      {
        ...b.deps,
        store: {
          ...store,
          claimDueAttempts: async (o) => {
            // The database is briefly unavailable on the first run.
            if (++claimCalls === 1) throw new Error('SQLITE_BUSY: database is locked');
            return store.claimDueAttempts(o);
          },
        },
      },
      { intervalMs: 20, logger, onError: (error) => errors.push(error) },
    );
    await waitFor(() => countEffects(b.store.db) === 1, 5000, 'the second run to fulfil');
    expect(errors).toHaveLength(1);
    expect(entries).toContainEqual(
      expect.objectContaining({
        level: 'error',
        obj: { err: { name: 'Error', message: 'SQLITE_BUSY: database is locked' } },
      }),
    );
    expect(JSON.stringify(entries)).not.toContain('demo-secret-change-me');
  });

  it('validates its options with messages that name the fix', () => {
    const deps = {
      client: { getSession: async () => ({ status: 'pending' as const }) },
      store: {} as never,
      actions: new Map(),
      now: Date.now,
    };
    const failure = (options: object) => {
      try {
        startSweepWorker(deps, options as never);
      } catch (error) {
        expect(isKitError(error, 'invalid_options')).toBe(true);
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    expect(failure({})).toMatch(/`intervalMs` must be a whole number of milliseconds.*intervalMs: 60000/);
    expect(failure({ intervalMs: 1000, batchSize: -1 })).toMatch(/`batchSize` must be an integer from 1 to 1000/);
    expect(failure({ intervalMs: 1000, stopTimeoutMs: 'soon' })).toMatch(/`stopTimeoutMs`/);
    // The worker's own options and its runs' options are reported together, in one error.
    const all = failure({ intervalMs: 1, batchSize: 0, leaseMs: 5 });
    for (const name of ['intervalMs', 'batchSize', 'leaseMs']) expect(all).toContain(`\`${name}\``);
    expect(all).toMatch(/^startSweepWorker: \n {2}- /);
  });

  it('never keeps the process alive by itself: a process that only starts a worker exits', () => {
    const script = `
      import { startSweepWorker } from './middleware/sweep/worker.ts';
      import { createSqliteStore } from './middleware/store/sqlite/sqlite.ts';
      import { createVerifyClient } from './middleware/client/client.ts';
      const store = createSqliteStore({ database: ':memory:' });
      const client = createVerifyClient({ baseUrl: 'http://127.0.0.1:9', clientId: 'c', clientSecret: 'test-secret' });
      const worker = startSweepWorker({ client, store, actions: new Map(), now: Date.now }, { intervalMs: 60000, initialDelayMs: 60000 });
      console.log('started', worker.running);`;
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: root,
      timeout: 15_000,
      encoding: 'utf8',
    });
    expect(result.stderr).toBe('');
    expect(result.stdout.trim()).toBe('started false');
    expect(result.status).toBe(0);
    expect(result.signal).toBeNull();
  });
});
