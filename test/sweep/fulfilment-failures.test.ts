/**
 * Each status read is paid for. When the read finds the attempt verified but its fulfilment fails
 * (the action's fulfil throws a plain error, or the store's commit fails), nothing is marked and
 * the attempt is read again: soon in its first reads (a blip there is fulfilled within
 * `errorRetryMs`), then on its schedule, so a fulfil that throws every time costs at most a few
 * reads more than the schedule rather than a read every `errorRetryMs` all day. A store that did
 * not answer in time (`store_unavailable`) is read again soon whenever it comes. Simulated day on
 * the test clock; same suite on every store.
 */
import { expect, it } from 'vitest';
import { KitError, KitErrorCode } from '../../middleware/errors.ts';
import { SWEEP_WINDOW_MS } from '../../middleware/sweep/sweep-options.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import type { SweepDeps } from '../../middleware/sweep/sweep-report.ts';
import type { Attempt, FulfilRequest, VerifyStore } from '../../middleware/store/types.ts';
import type { ActionDefinition, SessionStatus, VerifiedAttempt, VerifyClient } from '../../middleware/types.ts';
import { describeEachStore, POSTGRES, type StoreUnderTest } from '../support/stores.ts';
import { ACTION, useSweepEmulator } from '../support/sweep-bench.ts';
import { insertDueAttempt, MIN, READ_AGES, sweepEachDueTime } from '../support/sweep-day.ts';
import { useSweepSuite } from '../support/sweep-suite.ts';

const SEC = 1000;
const ERROR_RETRY_MS = 30 * SEC;

/** How each session's fulfilment goes, by its number (0 the first). */
type Fate = 'fulfil-throws' | 'commit-fails' | 'store-late' | 'ok';
const FULFILMENTS: Record<string, (call: number) => Fate> = {
  // The action's own bug: fulfil throws a plain error every time.
  'fulfil-always-throws': () => 'fulfil-throws',
  // A blip: fulfil throws once, then succeeds.
  'fulfil-throws-once': (call) => (call === 0 ? 'fulfil-throws' : 'ok'),
  // The store's commit fails with a plain error every time (a constraint the row breaks).
  'commit-always-fails': () => 'commit-fails',
  // The store did not answer in time once (the kit's store_unavailable), then committed.
  'store-late-once': (call) => (call === 0 ? 'store-late' : 'ok'),
};
/** Read failed by the service; the store fails to record that failure with a plain error, every time. */
const RECORD_FAILS = 'failure-record-fails';

/**
 * The store, its fulfilBatch failing as `commitFails` says and its recordFailure for RECORD_FAILS
 * always. A group holding a failing commit fails whole, as a transaction does, without counting it:
 * the sweep then commits each of the group on its own, and that commit is the one that counts.
 */
function failingWrites(
  store: VerifyStore<unknown>,
  commitFails: (sessionId: string, take: boolean) => Error | undefined,
) {
  const fulfilBatch = (requests: FulfilRequest<unknown>[]) => {
    const take = requests.length === 1;
    const failure = requests.map((r) => commitFails(r.attempt.sessionId, take)).find((e) => e !== undefined);
    return failure === undefined ? store.fulfilBatch(requests) : Promise.reject(failure);
  };
  const recordFailure: VerifyStore<unknown>['recordFailure'] = (sessionId, ...rest) =>
    sessionId === RECORD_FAILS
      ? Promise.reject(new Error('could not write to file "pg_wal/xlogtemp": No space left on device'))
      : store.recordFailure(sessionId, ...rest);
  const overrides: Record<string | symbol, unknown> = { fulfilBatch, recordFailure };
  return new Proxy(store, { get: (target, name) => overrides[name] ?? (Reflect.get(target, name) as unknown) });
}

async function insertVerified(h: StoreUnderTest, createdAt: number): Promise<Map<string, SessionStatus>> {
  const answers = new Map<string, SessionStatus>();
  for (const sessionId of [...Object.keys(FULFILMENTS), RECORD_FAILS]) {
    const state = await insertDueAttempt(h.store, sessionId, createdAt, {
      action: `grant_${sessionId.replaceAll('-', '_')}`,
    });
    const failed = sessionId === RECORD_FAILS;
    answers.set(
      sessionId,
      failed
        ? { status: 'failed', reason: 'max_attempts', state }
        : { status: 'verified', state, userRef: `user-${sessionId}` },
    );
  }
  return answers;
}

const emu = useSweepEmulator();

describeEachStore('a verified attempt whose fulfilment fails', (kind) => {
  const suite = useSweepSuite(emu, kind);

  it('is read again soon only in its first reads, then on its schedule, over a day; a blip is fulfilled once at the quick retry', async () => {
    const h = await suite.open();
    const createdAt = Date.now();
    let now = createdAt;
    const answers = await insertVerified(h, createdAt);
    /** Each session's reads, as the attempt's age when the client got them. */
    const readAges = new Map<string, number[]>();
    const appClient: VerifyClient = {
      createSession: () => Promise.reject(new Error('not used by the sweep')),
      getSession: (sessionId) => {
        readAges.set(sessionId, [...(readAges.get(sessionId) ?? []), now - createdAt]);
        return Promise.resolve(answers.get(sessionId)!);
      },
      close: () => Promise.resolve(),
    };
    /** Each session's fulfilments so far (a call of fulfil, or a commit the store failed first). */
    const calls = new Map<string, number>();
    const fateOf = (sessionId: string, take: boolean): Fate => {
      const call = calls.get(sessionId) ?? 0;
      const fate = FULFILMENTS[sessionId]!(call);
      if (take) calls.set(sessionId, call + 1);
      return fate;
    };
    const store = failingWrites(h.store, (sessionId, take) => {
      const fate = fateOf(sessionId, false);
      if (fate !== 'commit-fails' && fate !== 'store-late') return undefined;
      fateOf(sessionId, take);
      return fate === 'store-late'
        ? new KitError(KitErrorCode.StoreUnavailable, 'fulfilBatch did not answer in time')
        : new Error('new row violates check constraint "grants_positive"');
    });
    const effect = h.effect('sweep');
    const actions = new Map<string, ActionDefinition<unknown>>(
      Object.keys(FULFILMENTS).map((sessionId) => {
        const name = `grant_${sessionId.replaceAll('-', '_')}`;
        const fulfil = (tx: unknown, attempt: VerifiedAttempt) => {
          if (fateOf(sessionId, true) === 'fulfil-throws') throw new Error('the ledger refused the grant');
          // The effect writes the session id, state and userRef, which the verified attempt carries.
          return effect(tx, attempt as unknown as Attempt);
        };
        return [name, { name, operationSensitivity: 'normal', successPath: '/done', fulfil }];
      }),
    );
    const lines: { msg: string; err?: { message?: string } }[] = [];
    const log = (fields: object, msg: string) => void lines.push({ ...fields, msg });
    const logger = { info: log, warn: log, error: log, debug: log };
    const deps: SweepDeps<unknown> = { client: appClient, store, actions, now: () => now, logger };
    const stored = () => Promise.all([...answers.values()].map((a) => h.store.findAttemptByState(a.state!)));
    const nextDue = async () =>
      Math.min(...(await stored()).filter((a) => a!.outcome === 'pending').map((a) => a!.nextCheckAt));

    // Each run at the next time an attempt is due, for the whole day (at most 60 runs: the
    // schedule and its retries need about 25; a read every 30 s would need thousands).
    let errors = 0;
    await sweepEachDueTime({
      nextDue,
      end: createdAt + SWEEP_WINDOW_MS,
      setNow: (due) => (now = due),
      sweep: async () => {
        errors += (await runSweep(deps, { errorRetryMs: ERROR_RETRY_MS })).errors;
      },
      most: 60,
    });
    const quick = [3 * MIN, 3.5 * MIN, 4 * MIN];
    expect(Object.fromEntries(readAges)).toEqual({
      // 3:00, 3:30 and 4:00, its first three reads, failed: read again after 30 s; from its fourth (4:30) on, the schedule.
      'fulfil-always-throws': [...quick, ...READ_AGES.slice(1)],
      'commit-always-fails': [...quick, ...READ_AGES.slice(1)],
      [RECORD_FAILS]: [...quick, ...READ_AGES.slice(1)],
      // Failed at 3:00, fulfilled at the quick retry (3:30): never read again.
      'fulfil-throws-once': [3 * MIN, 3.5 * MIN],
      'store-late-once': [3 * MIN, 3.5 * MIN],
    });
    // Each blip fulfilled exactly once.
    expect(await h.effectsBy()).toEqual({ sweep: 2 });
    expect(await h.duplicateEffects()).toEqual([]);
    expect(Object.fromEntries((await stored()).map((a) => [a!.sessionId, a!.outcome]))).toEqual({
      'fulfil-always-throws': 'pending',
      'commit-always-fails': 'pending',
      [RECORD_FAILS]: 'pending',
      'fulfil-throws-once': 'fulfilled',
      'store-late-once': 'fulfilled',
    });
    // Every read that did not settle its attempt is counted in its run's errors and logged with its reason.
    const reads = [...readAges.values()].reduce((n, ages) => n + ages.length, 0);
    expect(errors).toBe(reads - 2);
    const failedChecks = lines.filter((l) => l.msg.startsWith('sweep: status check failed'));
    expect(failedChecks).toHaveLength(errors);
    const reasons = new Set(lines.map((l) => l.err?.message));
    expect(reasons).toContain('the ledger refused the grant');
    expect(reasons).toContain('new row violates check constraint "grants_positive"');
    expect(reasons).toContain('could not write to file "pg_wal/xlogtemp": No space left on device');
  });
});

describeEachStore(
  'an async fulfil that is late (hook_failed)',
  (kind) => {
    const suite = useSweepSuite(emu, kind);

    it('rolls back and is read again soon, as a fulfil that throws: fulfilled at the quick retry, once', async () => {
      const h = await suite.open();
      const createdAt = Date.now();
      let now = createdAt;
      const state = await insertDueAttempt(h.store, 'fulfil-late-once', createdAt);
      const readAges: number[] = [];
      const appClient: VerifyClient = {
        createSession: () => Promise.reject(new Error('not used by the sweep')),
        getSession: () => {
          readAges.push(now - createdAt);
          return Promise.resolve({ status: 'verified', state, userRef: 'user-fulfil-late-once' });
        },
        close: () => Promise.resolve(),
      };
      const effect = h.effect('sweep');
      let calls = 0;
      // Late on its first call (past hookTimeouts.fulfil), on time afterwards.
      const fulfil = async (tx: unknown, attempt: VerifiedAttempt) => {
        if (calls++ === 0) await new Promise((resolve) => setTimeout(resolve, 400));
        await effect(tx, attempt as unknown as Attempt);
      };
      const actions = new Map<string, ActionDefinition<unknown>>([
        [ACTION, { name: ACTION, operationSensitivity: 'normal', successPath: '/done', fulfil }],
      ]);
      const deps: SweepDeps<unknown> = {
        client: appClient,
        store: h.store,
        actions,
        now: () => now,
        hookTimeouts: { fulfil: 100 },
      };
      const stored = () => h.store.findAttemptByState(state);
      await sweepEachDueTime({
        nextDue: async () => ((await stored())!.outcome === 'pending' ? (await stored())!.nextCheckAt : Infinity),
        end: createdAt + SWEEP_WINDOW_MS,
        setNow: (due) => (now = due),
        sweep: () => runSweep(deps, { errorRetryMs: ERROR_RETRY_MS }),
        most: 60,
      });
      // Late at 3:00 and rolled back; read again 30 s later, not at the schedule's 4:30.
      expect(readAges).toEqual([3 * MIN, 3.5 * MIN]);
      expect((await stored())!.outcome).toBe('fulfilled');
      expect(await h.effectsBy()).toEqual({ sweep: 1 });
    });
  },
  [POSTGRES],
);
