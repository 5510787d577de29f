/**
 * A sweep run's group commit of slow fulfils: the attempts a run read verified together commit in
 * one store call, their fulfils one after another, each under its own deadline (what is left of
 * the run, and never past the store's end). However many there are, a group whose fulfils each
 * answer within their deadline commits, and the run reports what committed: never a store call
 * cut while its transaction goes on and commits, the run then saying nothing was fulfilled and
 * ending with sweep_failed. Same suite on every store (on SQLite a fulfil is synchronous).
 *
 * Driven by fake timers (the budget, each fulfil's slowness and every deadline are the test's
 * clock), the database answering in real time between the test's steps: the clock moves only while
 * PostgreSQL answers nothing, so a loaded machine's slow answers never look late to the run.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterEach, expect, it, vi } from 'vitest';
import type { VerifyStore } from '../../middleware/store/types.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import type { SweepDeps } from '../../middleware/sweep/sweep-report.ts';
import type { ActionDefinition, VerifyClient } from '../../middleware/types.ts';
import { dueAttempt } from '../support/due-attempt.ts';
import { describeEachStore, type StoreUnderTest } from '../support/stores.ts';
import { ACTION } from '../support/sweep-bench.ts';

/** The real clock's setTimeout: the database answers in real time while the test's clock stands still. */
const realSetTimeout = globalThis.setTimeout;
const realPause = () => new Promise((resolve) => realSetTimeout(resolve, 1));

afterEach(() => {
  vi.useRealTimers();
});

/** Connections and queries PostgreSQL is answering now (SQLite answers at once). */
let databaseAnswering = 0;

/** Counts each connection and query of a pg client until it is answered; gives the counting back. */
function countDatabaseWork(): () => void {
  const client = pg.Client.prototype as unknown as Record<'connect' | 'query', (...args: unknown[]) => unknown>;
  const originals = { connect: client.connect, query: client.query };
  for (const method of ['connect', 'query'] as const) {
    client[method] = function (this: unknown, ...args: unknown[]) {
      databaseAnswering += 1;
      const answered = () => void (databaseAnswering -= 1);
      const callback = args.at(-1);
      if (typeof callback === 'function')
        args[args.length - 1] = (...results: unknown[]) => (answered(), callback(...results));
      try {
        const answer = originals[method].apply(this, args) as Promise<unknown> | undefined;
        if (typeof callback === 'function') return answer;
        if (typeof answer?.then === 'function') answer.then(answered, answered);
        else answered();
        return answer;
      } catch (error) {
        answered();
        throw error;
      }
    };
  }
  return () => Object.assign(client, originals);
}

/**
 * `n` pending attempts due now, and a ready client that reads each one verified once all `n` reads
 * have started: they answer together, so the run commits them as one group.
 */
async function verifiedAttempts(store: VerifyStore<unknown>, n: number): Promise<Pick<VerifyClient, 'getSession'>> {
  const echoes = new Map<string, { state: string; userRef: string }>();
  for (let i = 0; i < n; i++) {
    const state = randomBytes(16).toString('base64url');
    const userRef = `user-${i}`;
    const sessionId = `ses_${randomBytes(8).toString('hex')}`;
    await store.insertAttempt(
      dueAttempt({ sessionId, state, userRef, destination: '+15550100001', platform: 'web', action: ACTION }),
    );
    echoes.set(sessionId, { state, userRef });
  }
  let started = 0;
  let allStarted!: () => void;
  const together = new Promise<void>((resolve) => (allStarted = resolve));
  return {
    getSession: async (sessionId: string) => {
      if (++started === n) allStarted();
      await together;
      return { sessionId, status: 'verified', ...echoes.get(sessionId) } as never;
    },
  };
}

/** The test action: writes its effect row, taking `ms` of the test's clock (blocking, on SQLite). */
function slowAction(h: StoreUnderTest, ms: number): ActionDefinition<unknown> {
  const effect = h.effect('sweep');
  const fulfil =
    h.kind === 'sqlite'
      ? (tx: unknown, attempt: unknown) => {
          effect(tx, attempt as never);
          vi.advanceTimersByTime(ms);
        }
      : async (tx: unknown, attempt: unknown) => {
          await new Promise((resolve) => setTimeout(resolve, ms));
          await effect(tx, attempt as never);
        };
  return { name: ACTION, operationSensitivity: 'normal', successPath: '/done', fulfil };
}

/** Moves the test's clock on until `run` settles, letting the database answer between steps. */
async function settle<T>(run: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  let done = false;
  const outcome = run.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  void outcome.then(() => (done = true));
  for (let ms = 0; ms < 300_000 && !done; ms += 100) {
    // Up to 2 s: a query still unanswered then waits on a lock held across the clock.
    for (let waited = 0; databaseAnswering > 0 && waited < 2000; waited += 1) await realPause();
    await vi.advanceTimersByTimeAsync(100);
    await realPause();
  }
  return outcome;
}

describeEachStore('a sweep run committing a group of slow fulfils', (kind) => {
  it("a group of 4 fulfils of 25 s each (30 s fulfil timeout, 60 s budget) runs past its call's share of the budget (90 s) and within the store's end (114 s): all 4 commit once and are reported fulfilled, their events delivered", async () => {
    const h = await kind.open();
    const uncount = countDatabaseWork();
    try {
      const client = await verifiedAttempts(h.store, 4);
      const delivered: string[] = [];
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
      const deps: SweepDeps<unknown> = {
        client: client as VerifyClient,
        store: h.store,
        actions: new Map([[ACTION, slowAction(h, 25_000)]]),
        now: () => Date.now() + 10 * 60_000,
        hookTimeouts: { fulfil: 30_000 },
        // Nothing is counted between a read and its fulfilment: the reads answered together commit together.
        pumping: { mode: 'off' },
        onOutcome: (event) => void delivered.push(event.sessionId),
      };
      const run = await settle(
        runSweep(deps, { timeBudgetMs: 60_000, batchSize: 4, concurrency: 4, owner: 'group-end' }),
      );
      // Anything the store still runs for the run finishes (a cut call's transaction would commit now).
      await settle(new Promise((resolve) => setTimeout(resolve, 60_000)));
      vi.useRealTimers();
      const { report, error } = run.ok
        ? { report: run.value, error: undefined }
        : { report: undefined, error: run.error };
      expect({
        error: error === undefined ? undefined : String(error),
        report: report && { fulfilled: report.fulfilled, errors: report.errors },
        delivered: delivered.length,
        effects: await h.countEffects(),
        duplicates: await h.duplicateEffects(),
      }).toEqual({
        error: undefined,
        report: { fulfilled: 4, errors: 0 },
        delivered: 4,
        effects: 4,
        duplicates: [],
      });
    } finally {
      vi.useRealTimers();
      uncount();
      await h.dispose();
    }
  });
});
