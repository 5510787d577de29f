/**
 * One sweep run (runSweep) over real HTTP against the emulator, on a real SQLite file.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { isKitError } from '../../middleware/errors.ts';
import type { KitLogger } from '../../middleware/logger.ts';
import { computeNextCheckAt } from '../../middleware/sweep/schedule.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import { DEFAULT_SWEEP_READ_AGES_MS } from '../../middleware/sweep/read-ages.ts';
import { resolveSweepOptions, SWEEP_WINDOW_MS } from '../../middleware/sweep/sweep-options.ts';
import { countEffects, DAY_MS, duplicateEffects, useSweepBench, type Bench } from '../support/sweep-bench.ts';
import { sqliteLease } from '../support/stores.ts';

const HOUR_MS = 3_600_000;

const { emu, openBench } = useSweepBench();
let b: Bench;
/** The sweep's clock: real time plus an offset the test moves (the emulator's clock is moved separately). */
let offsetMs = 0;
/** When set, the sweep's clock stands still at this time. */
let frozenAt: number | undefined;
const now = () => frozenAt ?? Date.now() + offsetMs;

afterEach(async () => {
  offsetMs = 0;
  frozenAt = undefined;
});

async function setUp(clientOptions?: Parameters<typeof openBench>[1]) {
  b = await openBench(now, clientOptions);
  return b;
}

describe('runSweep', () => {
  it("claims only its own kit's platform, so a mobile kit's sweep never reads (and backs off) a web kit's attempts", async () => {
    await setUp();
    const [verified] = await b.createAttempts(1);
    await emu.control.completeSession(verified!.sessionId, 'verified');
    const mobileRun = await runSweep({ ...b.deps, platform: 'mobile' });
    expect(mobileRun).toMatchObject({ claimed: 0, reads: 0 });
    expect((await b.attempt(verified!.state)).sweepChecks).toBe(0);
    const webRun = await runSweep({ ...b.deps, platform: 'web' });
    expect(webRun).toMatchObject({ claimed: 1, fulfilled: 1 });
  });

  it("never reads another client's attempt (after the client id changed): moves it on in the schedule, and its own client fulfils it", async () => {
    await setUp();
    const [verified] = await b.createAttempts(1);
    await emu.control.completeSession(verified!.sessionId, 'verified');
    const readsBefore = (await emu.control.stats()).statusReads;
    const newClientRun = await runSweep({ ...b.deps, clientId: 'the-next-client' });
    expect(newClientRun).toMatchObject({ claimed: 1, reads: 0, otherClient: 1, pending: 0, fulfilled: 0 });
    expect((await emu.control.stats()).statusReads).toBe(readsBefore);
    // Moved to the schedule's next read (4.5 min after its start): no claim takes it again before then.
    const moved = await b.attempt(verified!.state);
    expect(moved).toMatchObject({ outcome: 'pending', sweepChecks: 1, nextCheckAt: moved.createdAt + 270_000 });
    expect(sqliteLease(b.store.db, verified!.sessionId).owner).toBeNull();
    expect(await runSweep({ ...b.deps, clientId: 'the-next-client' })).toMatchObject({ claimed: 0 });
    // The client it was started with reads it at that time and fulfils it.
    offsetMs = 5 * 60_000;
    expect(await runSweep(b.deps)).toMatchObject({ claimed: 1, reads: 1, fulfilled: 1, otherClient: 0 });
  });

  it('fulfils a user who verified and never came back, once, and leaves the undecided one pending', async () => {
    await setUp();
    const [verified1, verified2, undecided] = await b.createAttempts(3);
    await emu.control.completeSession(verified1!.sessionId, 'verified');
    await emu.control.completeSession(verified2!.sessionId, 'verified');

    const report = await runSweep(b.deps);
    expect(report).toMatchObject({
      claimed: 3,
      reads: 3,
      fulfilled: 2,
      failed: 0,
      pending: 1,
      errors: 0,
      expired: 0,
      serviceReachable: true,
    });
    expect(countEffects(b.store.db)).toBe(2);
    expect((await b.attempt(verified1!.state)).outcome).toBe('fulfilled');
    expect((await b.attempt(verified2!.state)).outcome).toBe('fulfilled');
    const stillPending = await b.attempt(undecided!.state);
    expect(stillPending).toMatchObject({ outcome: 'pending', sweepChecks: 1 });
    expect(sqliteLease(b.store.db, undecided!.sessionId).owner).toBeNull();

    // The undecided user verifies later; a run after its next check time fulfils it, and only it.
    await emu.control.completeSession(undecided!.sessionId, 'verified');
    offsetMs = DEFAULT_SWEEP_READ_AGES_MS[0]! + 1000;
    const second = await runSweep(b.deps);
    expect(second).toMatchObject({ claimed: 1, fulfilled: 1, pending: 0 });
    expect(countEffects(b.store.db)).toBe(3);
    expect(duplicateEffects(b.store.db)).toEqual([]);
  });

  it('records the reason of a failed verification and never runs the action for it', async () => {
    await setUp();
    const [locked, changed] = await b.createAttempts(2);
    await emu.control.completeSession(locked!.sessionId, 'failed', 'otp_locked');
    await emu.control.completeSession(changed!.sessionId, 'failed', 'device_changed');

    const report = await runSweep(b.deps);
    expect(report).toMatchObject({ claimed: 2, fulfilled: 0, failed: 2, pending: 0, errors: 0 });
    expect(await b.attempt(locked!.state)).toMatchObject({
      outcome: 'failed',
      failureReason: 'otp_locked',
      fulfilledAt: null,
    });
    expect(await b.attempt(changed!.state)).toMatchObject({ outcome: 'failed', failureReason: 'device_changed' });
    expect(countEffects(b.store.db)).toBe(0);
    // Settled attempts are never claimed again.
    offsetMs = DAY_MS / 2;
    expect((await runSweep(b.deps)).claimed).toBe(0);
  });

  it('reads a pending attempt again only when due, at the default read ages: 4.5, 6.5, 9, 12, 16, 22, 30, 45 min', async () => {
    await setUp();
    const [attempt] = await b.createAttempts(1);
    const t0 = attempt!.createdAt;
    const seen: number[] = [];
    let at = t0;
    for (let read = 0; read < 8; read++) {
      frozenAt = at;
      const report = await runSweep(b.deps);
      expect(report.reads).toBe(1);
      const stored = await b.attempt(attempt!.state);
      expect(stored.sweepChecks).toBe(read + 1);
      seen.push(stored.nextCheckAt - at);
      // One millisecond before it is due, nothing is read.
      const readsBefore = (await emu.control.stats()).statusReads;
      frozenAt = stored.nextCheckAt - 1;
      expect((await runSweep(b.deps)).claimed).toBe(0);
      expect((await emu.control.stats()).statusReads).toBe(readsBefore);
      at = stored.nextCheckAt;
    }
    // Read first at age 0, then at each read age: the gaps between them.
    expect(seen).toEqual([270_000, 120_000, 150_000, 180_000, 240_000, 360_000, 480_000, 900_000]);
  });

  it("never schedules a read outside the 24 h window with the integrator's own backoffMs: one last read a minute before its end, then none", () => {
    const createdAt = 1_000_000;
    const end = createdAt + SWEEP_WINDOW_MS;
    const own = [30_000, 60_000, 120_000, 300_000, 600_000, 1_800_000];
    // Far from the end: plain backoff.
    expect(computeNextCheckAt({ createdAt, sweepChecks: 0 }, createdAt + 5000, own)).toBe(createdAt + 5000 + 30_000);
    expect(computeNextCheckAt({ createdAt, sweepChecks: 99 }, createdAt + 5000, own)).toBe(
      createdAt + 5000 + 1_800_000,
    );
    // 10 min before the end, a 30 min delay would cross it: the last read goes a minute before the end.
    expect(computeNextCheckAt({ createdAt, sweepChecks: 9 }, end - 600_000, own)).toBe(end - 60_000);
    // That last read done: the next time is the window's end, where it is no longer claimable.
    expect(computeNextCheckAt({ createdAt, sweepChecks: 10 }, end - 60_000, own)).toBe(end);
  });

  it('marks an attempt older than 24 h expired without reading it, even if the user had verified (emulator clock and sweep clock both moved)', async () => {
    await setUp();
    // `late` started 23 h before the other one, on the sweep's clock (stored through the store, no SQL).
    const [late] = await b.createAttempts(1, { createdAt: now() - 23 * HOUR_MS });
    await b.createAttempts(1);
    await emu.control.completeSession(late!.sessionId, 'verified');
    await emu.control.advanceClock(24 * 3600 + 60);
    // `late` is now 24 h 1 min old, past its window; the other one 1 h 1 min, still in it.
    offsetMs = HOUR_MS + 60_000;
    const readsBefore = (await emu.control.stats()).statusReads;

    const report = await runSweep(b.deps);
    expect(report.expired).toBe(1);
    expect(await b.attempt(late!.state)).toMatchObject({ outcome: 'expired', fulfilledAt: null });
    expect(countEffects(b.store.db)).toBe(0);
    // Only the attempt still in its window was read.
    expect(report.reads).toBe(1);
    expect((await emu.control.stats()).statusReads).toBe(readsBefore + 1);

    // And it is never read again, however often the sweep runs.
    offsetMs = 2 * DAY_MS;
    const later = await runSweep(b.deps);
    expect(later.claimed).toBe(0);
    expect((await emu.control.stats()).statusReads).toBe(readsBefore + 1);
    expect((await b.attempt(late!.state)).outcome).toBe('expired');
  });

  it('leaves every attempt pending when the service answers 503, reports it unreachable, and a later run completes them', async () => {
    await setUp({ statusReadAttempts: 1 });
    const attempts = await b.createAttempts(4);
    for (const a of attempts) await emu.control.completeSession(a.sessionId, 'verified');
    await emu.control.injectFaults({ statusFailures: 100 });

    const failing = await runSweep(b.deps, { errorRetryMs: 5000 });
    expect(failing).toMatchObject({ claimed: 4, reads: 4, errors: 4, fulfilled: 0, serviceReachable: false });
    for (const a of attempts) {
      const stored = await b.attempt(a.state);
      expect(stored.outcome).toBe('pending');
      expect(stored.failureReason).toBeNull();
      // Retried soon (errorRetryMs), not after the backoff.
      expect(stored.nextCheckAt - now()).toBeLessThanOrEqual(5000);
      expect(sqliteLease(b.store.db, a.sessionId).owner).toBeNull();
    }
    expect(countEffects(b.store.db)).toBe(0);

    await emu.control.injectFaults({ statusFailures: 0 });
    offsetMs = 5000;
    const recovered = await runSweep(b.deps);
    expect(recovered).toMatchObject({ claimed: 4, fulfilled: 4, errors: 0, serviceReachable: true });
    expect(countEffects(b.store.db)).toBe(4);
  });

  it('survives faults in the middle of a run: reads that fail or time out stay pending, the rest complete, the next run finishes', async () => {
    await setUp({ statusReadAttempts: 1, headersMs: 300 });
    const attempts = await b.createAttempts(6);
    for (const a of attempts) await emu.control.completeSession(a.sessionId, 'verified');
    // Two 503s among six reads (one at a time, so the first two reads get them).
    await emu.control.injectFaults({ statusFailures: 2 });
    const mixed = await runSweep(b.deps, { concurrency: 1, errorRetryMs: 2000 });
    expect(mixed).toMatchObject({ claimed: 6, errors: 2, fulfilled: 4, serviceReachable: true });
    expect(countEffects(b.store.db)).toBe(4);

    // The next run is slower than the client's timeout: nothing is marked, nothing lost.
    // (undici checks its headers timeout on a coarse ~0.5 s tick, hence the wide margin.)
    await emu.control.injectFaults({ statusDelayMs: 2500 });
    offsetMs = 2000;
    const slow = await runSweep(b.deps, { errorRetryMs: 2000 });
    expect(slow).toMatchObject({ claimed: 2, errors: 2, fulfilled: 0, serviceReachable: false });
    const outcomes = await Promise.all(attempts.map(async (a) => (await b.attempt(a.state)).outcome));
    expect(outcomes.filter((outcome) => outcome === 'pending')).toHaveLength(2);

    await emu.control.injectFaults({ statusDelayMs: 0 });
    offsetMs = 4000;
    const done = await runSweep(b.deps);
    expect(done).toMatchObject({ claimed: 2, fulfilled: 2, errors: 0 });
    expect(countEffects(b.store.db)).toBe(6);
    expect(duplicateEffects(b.store.db)).toEqual([]);
  });

  it('does not fulfil when the service echoes another user, and does not mark the attempt either', async () => {
    await setUp();
    // The service's session is for its user; the kit stored the attempt for someone else, so the
    // echoed userRef differs from the stored one.
    const [attempt] = await b.createAttempts(1, { storedUserRef: 'someone-else' });
    await emu.control.completeSession(attempt!.sessionId, 'verified');
    const logged: { level: string; obj: Record<string, unknown> }[] = [];
    const logger: KitLogger = {
      info: (obj) => logged.push({ level: 'info', obj }),
      warn: (obj) => logged.push({ level: 'warn', obj }),
      error: (obj) => logged.push({ level: 'error', obj }),
    };
    const report = await runSweep(b.deps, { logger });
    expect(report).toMatchObject({ reads: 1, errors: 1, fulfilled: 0, serviceReachable: true });
    expect(await b.attempt(attempt!.state)).toMatchObject({ outcome: 'pending', sweepChecks: 1 });
    expect(countEffects(b.store.db)).toBe(0);
    expect(logged).toContainEqual(
      expect.objectContaining({
        level: 'error',
        obj: expect.objectContaining({ err: expect.objectContaining({ code: 'service_response_mismatch' }) }),
      }),
    );
    expect(JSON.stringify(logged)).not.toContain('demo-secret-change-me');
  });

  it("does not mark the attempt failed when the service's failure echoes another user: its user may have verified", async () => {
    await setUp();
    const [attempt] = await b.createAttempts(1, { storedUserRef: 'someone-else' });
    await emu.control.completeSession(attempt!.sessionId, 'failed', 'otp_locked');
    const errors: unknown[] = [];
    const logger: KitLogger = { info: () => {}, warn: () => {}, error: (obj) => errors.push(obj) };
    const report = await runSweep(b.deps, { logger });
    expect(report).toMatchObject({ reads: 1, errors: 1, failed: 0, fulfilled: 0 });
    expect(await b.attempt(attempt!.state)).toMatchObject({ outcome: 'pending', failureReason: null, sweepChecks: 1 });
    expect(errors).toContainEqual(
      expect.objectContaining({ err: expect.objectContaining({ code: 'service_response_mismatch' }) }),
    );
  });

  it('keeps sweeping when the logger itself throws: failed reads are still rescheduled, nothing stays leased', async () => {
    await setUp({ statusReadAttempts: 1 });
    const attempts = await b.createAttempts(3);
    await emu.control.injectFaults({ statusFailures: 3 });
    const explode = () => {
      throw new Error('log sink down');
    };
    const report = await runSweep(b.deps, {
      logger: { info: explode, warn: explode, error: explode },
      errorRetryMs: 5000,
    });
    expect(report).toMatchObject({ claimed: 3, errors: 3 });
    for (const a of attempts) {
      expect(sqliteLease(b.store.db, a.sessionId).owner).toBeNull();
      expect((await b.attempt(a.state)).sweepChecks).toBe(1);
    }
  });

  it('claims in batches of batchSize until a short batch, with at most `concurrency` reads in flight', async () => {
    await setUp();
    const attempts = await b.createAttempts(23);
    for (const a of attempts) await emu.control.completeSession(a.sessionId, 'verified');
    await emu.control.injectFaults({ statusDelayMs: 20 });
    const batches: number[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const store = b.store;
    const deps = {
      ...b.deps,
      store: {
        ...store,
        claimDueAttempts: async (o: Parameters<typeof store.claimDueAttempts>[0]) => {
          const claimed = await store.claimDueAttempts(o);
          batches.push(claimed.length);
          return claimed;
        },
      },
      client: {
        getSession: async (id: string) => {
          inFlight++;
          maxInFlight = Math.max(maxInFlight, inFlight);
          try {
            return await b.client.getSession(id);
          } finally {
            inFlight--;
          }
        },
      },
    };
    const report = await runSweep(deps, { batchSize: 10, concurrency: 3 });
    expect(batches).toEqual([10, 10, 3]);
    expect(maxInFlight).toBe(3);
    expect(report).toMatchObject({ claimed: 23, fulfilled: 23 });
    expect(countEffects(b.store.db)).toBe(23);
  });

  /** 23 verified due attempts, and deps that record how many reads had started at each claim. */
  async function countingReadsAtClaims() {
    await setUp();
    const attempts = await b.createAttempts(23);
    for (const a of attempts) await emu.control.completeSession(a.sessionId, 'verified');
    let readsStarted = 0;
    const readsStartedAtClaim: number[] = [];
    const store = b.store;
    const deps = {
      ...b.deps,
      store: {
        ...store,
        claimDueAttempts: (o: Parameters<typeof store.claimDueAttempts>[0]) => {
          readsStartedAtClaim.push(readsStarted);
          return store.claimDueAttempts(o);
        },
      },
      client: {
        getSession: (id: string) => {
          readsStarted++;
          return b.client.getSession(id);
        },
      },
    };
    return { attempts, deps, readsStartedAtClaim };
  }

  it('claims the next batch while the last reads of the current one are under way, so no read waits for a claim', async () => {
    const { attempts, deps, readsStartedAtClaim } = await countingReadsAtClaims();
    const report = await runSweep(deps, { batchSize: 10, concurrency: 3 });
    // Each next claim starts before the previous batch's last attempt is read (10, then 20 reads).
    expect(readsStartedAtClaim).toHaveLength(3);
    expect(readsStartedAtClaim[0]).toBe(0);
    expect(readsStartedAtClaim[1]).toBeLessThan(10);
    expect(readsStartedAtClaim[2]).toBeLessThan(20);
    expect(report).toMatchObject({ claimed: 23, reads: 23, fulfilled: 23, released: 0 });
    expect(countEffects(b.store.db)).toBe(23);
    for (const a of attempts) expect(sqliteLease(b.store.db, a.sessionId).owner).toBeNull();
  });

  it('claims the next batch once half of the current one is left, so a slow claim does not hold up the reads', async () => {
    const { deps, readsStartedAtClaim } = await countingReadsAtClaims();
    // One worker reads the attempts in order: batches of 10 are claimed when 5 are left, not when the last is taken.
    const report = await runSweep(deps, { batchSize: 10, concurrency: 1 });
    expect(readsStartedAtClaim).toEqual([0, 5, 15]);
    expect(report).toMatchObject({ claimed: 23, reads: 23, fulfilled: 23, released: 0 });
    expect(countEffects(b.store.db)).toBe(23);
  });

  it('stops claiming on abort; in-flight reads finish and unstarted claims are released', async () => {
    await setUp();
    const attempts = await b.createAttempts(6);
    for (const a of attempts) await emu.control.completeSession(a.sessionId, 'verified');
    await emu.control.injectFaults({ statusDelayMs: 200 });
    const abort = new AbortController();
    let started = 0;
    const client = {
      getSession: (id: string) => {
        // Stop as the second read starts: both in-flight reads must still complete.
        if (++started === 2) abort.abort();
        return b.client.getSession(id);
      },
    };
    const report = await runSweep({ ...b.deps, client }, { concurrency: 2, signal: abort.signal });
    expect(report).toMatchObject({ stoppedBy: 'signal', claimed: 6, reads: 2, fulfilled: 2, released: 4 });
    expect(countEffects(b.store.db)).toBe(2);
    for (const a of attempts) expect(sqliteLease(b.store.db, a.sessionId).owner).toBeNull();
  });

  it('rejects bad options with a message that names the fix', () => {
    const message = (options: object) => {
      try {
        resolveSweepOptions(options);
      } catch (error) {
        expect(isKitError(error, 'invalid_options')).toBe(true);
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    expect(message({ batchSize: 0 })).toMatch(/`batchSize` must be an integer from 1 to 1000.*batchSize: 1/);
    expect(message({ concurrency: 2.5 })).toMatch(/`concurrency` must be an integer from 1 to 64/);
    expect(message({ leaseMs: 10 })).toMatch(/`leaseMs`.*at least|`leaseMs` must be an integer from 1000/);
    expect(message({ backoffMs: [] })).toMatch(/`backoffMs` must be a non-empty array/);
    expect(message({ owner: '' })).toMatch(/`owner` must be a non-empty string/);
    // Every problem at once, in one error: a caller fixes them in one go.
    const all = message({ batchSize: 0, concurrency: 99, owner: '', retention: { redactAfterMs: 5 } });
    for (const name of ['batchSize', 'concurrency', 'owner', 'retention']) expect(all).toContain(`\`${name}\``);
    expect(all).toMatch(/^runSweep: \n {2}- /);
    expect(resolveSweepOptions({})).toMatchObject({
      batchSize: 50,
      concurrency: 4,
      leaseMs: 120_000,
      timeBudgetMs: 60_000,
    });
  });

  it("refuses a budget clock (the deps' monotonicNow) that is not a function, naming the fix, before it claims anything", async () => {
    await setUp();
    const [attempt] = await b.createAttempts(1);
    const run = runSweep({ ...b.deps, monotonicNow: 60_000 as unknown as () => number });
    await expect(run).rejects.toSatisfy((error) => isKitError(error, 'invalid_options'));
    await expect(run).rejects.toThrow(
      "runSweep: the deps' `monotonicNow` must be a function returning milliseconds that never go back, e.g. () => performance.now(); got number. Leave it out for performance.now.",
    );
    expect(sqliteLease(b.store.db, attempt!.sessionId).owner).toBeNull();
    expect((await b.attempt(attempt!.state)).sweepChecks).toBe(0);
  });
});
