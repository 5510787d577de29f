/**
 * The sweep's pacing (middleware/sweep/pacing.ts): on a 429 every sweep process slows down
 * together (AIMD, honouring Retry-After), the slow-down lives in the store so another process
 * starts from it, `maxReadsPerSecond` holds across processes, and a sweep against a limited service
 * still fulfils every verified attempt exactly once. Same suites on every store.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { KitError, KitErrorCode } from '../../middleware/errors.ts';
import { createPacer, currentRate, cutPace, takePermits, UNPACED } from '../../middleware/sweep/pacing.ts';
import { gatherWindowMs } from '../../middleware/sweep/gather-window.ts';
import { resolveSweepOptions } from '../../middleware/sweep/sweep-options.ts';
import { parseJobConfig } from '../../middleware/sweep/sweep-job-args.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import type { VerifyClient } from '../../middleware/types.ts';
import type { SweepPace, VerifyStore } from '../../middleware/store/types.ts';
import { describeEachStore, type StoreUnderTest } from '../support/stores.ts';
import { client, sweepDeps, useSweepEmulator, verifiedAttempts } from '../support/sweep-bench.ts';

const T0 = 1_700_000_000_000;
/** Takes every permit the pace hands out, every 10 ms from `from` to `to`; `granted`: those of the last second. */
function readAll(start: SweepPace, from: number, to: number): { pace: SweepPace; granted: number } {
  let pace = start;
  let lastSecond = 0;
  for (let t = from; t <= to; t += 10) {
    const taken = takePermits(pace, t, undefined);
    if (t > to - 1000) lastSecond += taken.granted;
    pace = taken.next ?? pace;
  }
  return { pace, granted: lastSecond };
}

/**
 * Time that moves only when every waiter waits: the earliest wait ends first, so pacers run on a
 * clock of their own, as fast as the machine allows.
 */
function virtualTime() {
  let clock = T0;
  const waits: { at: number; resume: () => void }[] = [];
  return {
    now: () => clock,
    wait: (ms: number) => new Promise<void>((resume) => waits.push({ at: clock + ms, resume })),
    async runUntil(work: Promise<unknown>) {
      let done = false;
      const finished = work.then(() => (done = true));
      while (!done) {
        await new Promise((resolve) => setImmediate(resolve));
        waits.sort((a, b) => a.at - b.at);
        const next = waits.shift();
        if (next === undefined) continue;
        clock = Math.max(clock, next.at);
        next.resume();
      }
      await finished;
    },
  };
}

const busy = (seconds: number) =>
  new KitError(KitErrorCode.ServiceBusy, 'busy', { serviceStatus: 429, retryAfterSeconds: seconds });

describe('pacing arithmetic', () => {
  it('is unpaced until a 429; then cut, paused for the Retry-After, and growing back to a share below the limit', () => {
    expect(takePermits(UNPACED, T0, undefined)).toMatchObject({ granted: Infinity, next: undefined });
    // First 429: the rate starts from what this process was reading, and nobody reads for 2 s.
    const first = cutPace(UNPACED, T0, 2000, 100);
    expect(first).toMatchObject({ ratePerSecond: 80, limitPerSecond: null, pausedUntil: T0 + 2000 });
    expect(takePermits(first, T0 + 1999, undefined)).toMatchObject({ granted: 0, waitMs: 1 });
    // Before a limit is known the rate grows quickly while it is read at (it may have started from one process's share).
    const read = readAll(first, T0 + 2000, T0 + 3000);
    expect(read.pace.ratePerSecond).toBeCloseTo(120, -1);
    // Second 429: the limit is what was read in about the last second, never more than the rate.
    const second = cutPace(read.pace, T0 + 3000, 1000, 0);
    expect(second.limitPerSecond).toBeGreaterThan(0.6 * read.granted);
    expect(second.limitPerSecond).toBeLessThanOrEqual(Math.min(read.granted, read.pace.ratePerSecond!));
    expect(second.ratePerSecond).toBeCloseTo(0.8 * second.limitPerSecond!);
    // More 429s within a second of a cut are the same congestion: the pause grows, the rate is not cut again.
    expect(cutPace(second, T0 + 3500, 3000, 0)).toMatchObject({ ratePerSecond: second.ratePerSecond });
    expect(cutPace(second, T0 + 3500, 3000, 0).pausedUntil).toBe(T0 + 6500);
    // Additive growth up to 90 % of the limit (the landings' share is left), then only a slow probe.
    const limit = second.limitPerSecond!;
    expect(currentRate(second, T0 + 4000 + 1000)).toBeCloseTo(second.ratePerSecond! + 0.05 * limit);
    const tenSeconds = readAll(second, T0 + 4000, T0 + 14_000).pace.ratePerSecond!;
    expect(tenSeconds).toBeLessThan(limit);
    expect(tenSeconds).toBeGreaterThan(0.9 * limit);
    // The probe passes the old limit after about twenty seconds: capacity the landings freed is found again.
    expect(readAll(second, T0 + 4000, T0 + 64_000).pace.ratePerSecond).toBeGreaterThan(limit);
    // Ten minutes without a 429: unpaced again.
    expect(currentRate(second, T0 + 3000 + 11 * 60_000)).toBeNull();
  });

  it('grows only while its permits are taken: an idle minute leaves the rate where it was', () => {
    const known = { ...UNPACED, ratePerSecond: 20, limitPerSecond: 25, cutAt: T0, tokensAt: T0 };
    // Read at for a second: it grows by the step.
    expect(currentRate(readAll(known, T0, T0 + 1000).pace, T0 + 1000)).toBeCloseTo(20 + 0.05 * 25);
    // A minute with nobody reading, then a permit: no growth at all (the bucket was full).
    expect(takePermits(known, T0 + 60_000, undefined).next?.ratePerSecond).toBe(20);
    // A second write never credits more than a second of growth, whatever the gap.
    expect(currentRate(known, T0 + 60_000)).toBeCloseTo(20 + 0.05 * 25);
    // Before a limit is known, the same: no exponential growth across a pause.
    const starting = { ...UNPACED, ratePerSecond: 16, cutAt: T0, tokensAt: T0 };
    expect(takePermits(starting, T0 + 60_000, undefined).next?.ratePerSecond).toBe(16);
  });

  it('a 429 when the sweep read nothing lately (a landing met it between runs) pauses, and learns no limit from reads nobody made', () => {
    // Slow start, last read a minute ago: about nothing granted in the last second.
    const starting = { ...UNPACED, ratePerSecond: 40, cutAt: T0, tokensAt: T0, readsGranted: 30 };
    const cut = cutPace(starting, T0 + 60_000, 1000, 0);
    expect(cut).toMatchObject({ ratePerSecond: 40, limitPerSecond: null, pausedUntil: T0 + 61_000 });
    // With a limit known, that limit bounds the cut (the rate is 40 grown by a second's step): never to nothing.
    const known = { ...starting, limitPerSecond: 50 };
    expect(cutPace(known, T0 + 60_000, 1000, 0)).toMatchObject({ limitPerSecond: 42.5, ratePerSecond: 34 });
  });

  it("never waits past the run's end: a Retry-After beyond it ends the wait at once", async () => {
    const pacer = createPacer({ store: {}, deadline: Date.now() + 500 });
    expect(await pacer.acquire()).toBe(true);
    await pacer.limited(busy(60));
    const began = Date.now();
    expect(await pacer.acquire()).toBe(false);
    expect(Date.now() - began).toBeLessThan(400);
  });

  it("starts the first cut from this process's reads of the last second only", async () => {
    let clock = T0;
    let pace = UNPACED;
    const store: Pick<VerifyStore<unknown>, 'updateSweepPace'> = {
      updateSweepPace: async (change) => (pace = change(pace) ?? pace),
    };
    const pacer = createPacer({ store, now: () => clock });
    for (let i = 0; i < 30; i++) expect(await pacer.acquire()).toBe(true);
    clock += 1500;
    for (let i = 0; i < 10; i++) expect(await pacer.acquire()).toBe(true);
    await pacer.limited(busy(1));
    // 10 reads a second, cut to 80 %: the 30 reads of 1.5 s ago no longer count.
    expect(pace).toMatchObject({ ratePerSecond: 8, pausedUntil: clock + 1000 });
  });

  it('spreads the reads it is granted at the rate, never a burst in flight at once: 4 workers at a cap of 100/s start 10 ms apart', async () => {
    const time = virtualTime();
    let pace = UNPACED;
    const store: Pick<VerifyStore<unknown>, 'updateSweepPace'> = {
      updateSweepPace: async (change) => (pace = change(pace) ?? pace),
    };
    const pacer = createPacer({ store, cap: 100, now: time.now, wait: time.wait });
    const starts: number[] = [];
    const worker = async () => {
      for (let i = 0; i < 5; i++) if (await pacer.acquire()) starts.push(time.now());
    };
    await time.runUntil(Promise.all([worker(), worker(), worker(), worker()]));
    expect(starts).toHaveLength(20);
    const gaps = starts.slice(1).map((t, i) => t - starts[i]!);
    expect(Math.min(...gaps), JSON.stringify(starts.map((t) => t - T0))).toBeGreaterThanOrEqual(9.99);
    expect(starts.at(-1)! - starts[0]!).toBeGreaterThanOrEqual(190);
  });

  it("says its own read rate, paced or not (a group's gathering window follows it)", async () => {
    const time = virtualTime();
    let pace = UNPACED;
    const store: Pick<VerifyStore<unknown>, 'updateSweepPace'> = {
      updateSweepPace: async (change) => (pace = change(pace) ?? pace),
    };
    const unpaced = createPacer({ store, now: time.now, wait: time.wait });
    expect(unpaced.readsPerSecond()).toBe(0);
    await time.runUntil(
      (async () => {
        for (let i = 0; i < 100; i++) await unpaced.acquire();
      })(),
    );
    // Unpaced, 100 reads at once: a batch of 50 takes half a second at that rate.
    expect(unpaced.readsPerSecond()).toBe(100);
    expect(gatherWindowMs(unpaced.readsPerSecond(), 50, 120_000)).toBe(500);
    const paced = createPacer({ store, cap: 50, now: time.now, wait: time.wait });
    await time.runUntil(
      (async () => {
        for (let i = 0; i < 100; i++) await paced.acquire();
      })(),
    );
    // 100 reads at 50 a second: the last second held 50 of them.
    expect(paced.readsPerSecond()).toBe(50);
    expect(gatherWindowMs(paced.readsPerSecond(), 50, 120_000)).toBe(1000);
  });

  it('counts exactly the last second of reads however many came before (thousands a second, for seconds)', async () => {
    let t = 0;
    const pacer = createPacer({
      store: { updateSweepPace: async (change) => change(UNPACED) ?? UNPACED },
      now: () => t,
    });
    // Five seconds of unpaced reads, four every millisecond.
    const counts: number[] = [];
    for (let i = 0; i < 20_000; i++) {
      t = Math.floor(i / 4);
      expect(await pacer.acquire()).toBe(true);
      if (i % 4000 === 3999) counts.push(pacer.readsPerSecond());
    }
    expect(counts).toEqual([4000, 4000, 4000, 4000, 4000]);
    t += 500;
    expect(pacer.readsPerSecond()).toBe(2000);
  });

  it('takes permits from the shared row a chunk at a time: two processes at 200/s write it about 20 times a second, not once a read, and ask it once per wait, not once per worker', async () => {
    const time = virtualTime();
    let pace = UNPACED;
    let writes = 0;
    let asks = 0;
    const store: Pick<VerifyStore<unknown>, 'updateSweepPace'> = {
      updateSweepPace: async (change) => {
        asks++;
        const next = change(pace);
        if (next !== undefined) writes++;
        return (pace = next ?? pace);
      },
    };
    const end = T0 + 2000;
    let reads = 0;
    const sweepProcess = () => {
      const pacer = createPacer({ store, cap: 200, now: time.now, wait: time.wait, deadline: end });
      const worker = async () => {
        while (await pacer.acquire()) reads++;
      };
      return Promise.all([worker(), worker(), worker(), worker()]);
    };
    await time.runUntil(Promise.all([sweepProcess(), sweepProcess()]));
    // 200 a second for 2 s, plus the saved-up burst (0.2 s worth).
    expect(reads).toBeGreaterThanOrEqual(380);
    expect(reads).toBeLessThanOrEqual(445);
    // A chunk is 0.05 s of the rate (10 reads): about 40 writes, never one a read.
    expect(writes, `${writes} writes for ${reads} reads`).toBeLessThanOrEqual(reads / 8);
    // A process's four workers share one ask and its wait: asking once per worker was 356 asks here.
    expect(asks, `${asks} asks for ${reads} reads`).toBeLessThanOrEqual(reads / 3);
  });

  it('hands out permits at the rate, a chunk at a time, and never more than the cap', () => {
    let pace = { ...UNPACED, tokensAt: T0 };
    let granted = 0;
    for (let t = T0; t <= T0 + 10_000; t += 10) {
      const taken = takePermits(pace, t, 50);
      granted += taken.granted;
      pace = taken.next ?? pace;
    }
    // 50 a second for 10 s, plus at most the saved-up burst (0.2 s worth).
    expect(granted).toBeGreaterThanOrEqual(495);
    expect(granted).toBeLessThanOrEqual(511);
  });

  it('validates maxReadsPerSecond with the other sweep options', () => {
    expect(resolveSweepOptions({ maxReadsPerSecond: 12.5 }).maxReadsPerSecond).toBe(12.5);
    expect(resolveSweepOptions({}).maxReadsPerSecond).toBeUndefined();
    expect(parseJobConfig(['--max-reads-per-second', '50'], {}, undefined).sweep.maxReadsPerSecond).toBe(50);
    expect(parseJobConfig([], { SWEEP_MAX_READS_PER_SECOND: '7.5' }, undefined).sweep.maxReadsPerSecond).toBe(7.5);
    for (const bad of [0, -1, Number.NaN, '10']) {
      expect(() => resolveSweepOptions({ maxReadsPerSecond: bad as number })).toThrow(/maxReadsPerSecond/);
    }
  });
});

const emu = useSweepEmulator();

describeEachStore('sweep pacing', (kind) => {
  let h: StoreUnderTest;
  let verifyClient: VerifyClient;
  beforeAll(async () => {
    verifyClient = client(emu.url);
  });
  afterEach(async () => {
    await h?.dispose();
    await emu.control.reset();
  });
  afterAll(async () => {
    await verifyClient.close();
  });

  it('the slow-down one process records is what another store handle sees and waits out', async () => {
    h = await kind.open();
    const other = await h.openAnother();
    // Both processes on the test clock: the other one's wait moves it instead of sleeping the second.
    const time = virtualTime();
    const first = createPacer({ store: h.store, now: time.now, wait: time.wait });
    for (let i = 0; i < 50; i++) expect(await first.acquire()).toBe(true);
    await first.limited(busy(1));
    // Cut to 40 reads a second, which alone would let a read through in 50 ms: only the pause holds for 1 s.
    const seen = await other.updateSweepPace!(() => undefined);
    expect(seen).toMatchObject({ ratePerSecond: 40, pausedUntil: T0 + 1000 });
    // A sweep in the other process reads nothing before the Retry-After has passed.
    let readAt: number | undefined;
    const otherSweep = createPacer({ store: other, now: time.now, wait: time.wait });
    await time.runUntil(otherSweep.acquire().then((granted) => granted && (readAt = time.now())));
    expect(readAt).toBeGreaterThanOrEqual(seen.pausedUntil);
  });

  it('backs off on 429 and still fulfils every verified attempt exactly once', async () => {
    h = await kind.open();
    await verifiedAttempts(emu, h.store, verifyClient, 40);
    await emu.control.setRateLimits({ statusReadsPerSecond: 15 });
    const report = await runSweep(sweepDeps(h, h.store, verifyClient, 'sweep'), { concurrency: 8 });
    expect(report).toMatchObject({ fulfilled: 40, errors: 0, released: 0 });
    expect(report.rateLimited).toBeGreaterThan(0);
    expect(await h.countEffects()).toBe(40);
    expect(await h.duplicateEffects()).toEqual([]);
    const stats = await emu.control.stats();
    // Eight workers reading flat out would meet hundreds of 429s in those seconds; a paced sweep
    // meets a few per congestion (the reads in flight when it began), fewer than there are attempts.
    expect(stats.statusReadsLimited).toBe(report.rateLimited);
    expect(stats.statusReadsLimited, JSON.stringify({ report, stats })).toBeLessThan(40);
    expect((await h.store.updateSweepPace!(() => undefined)).ratePerSecond).toBeGreaterThan(0);
  });

  it('stops within its time budget when the Retry-After outlasts it, and hands its claims back', async () => {
    h = await kind.open();
    await verifiedAttempts(emu, h.store, verifyClient, 6);
    await emu.control.setRateLimits({ statusReadsPerSecond: 0.01 }); // Retry-After: 100 s
    const began = Date.now();
    const report = await runSweep(sweepDeps(h, h.store, verifyClient, 'sweep'), { timeBudgetMs: 3000 });
    expect(Date.now() - began).toBeLessThan(10_000);
    expect(report).toMatchObject({ stoppedBy: 'time_budget', fulfilled: 1, errors: 0 });
    expect(report.rateLimited).toBeGreaterThan(0);
    expect(report.released).toBe(5);
    expect(await h.leaseOwners()).toBe(0);
  });

  it('holds maxReadsPerSecond across two sweep processes', async () => {
    h = await kind.open();
    const other = await h.openAnother();
    await verifiedAttempts(emu, h.store, verifyClient, 40);
    const cap = { maxReadsPerSecond: 16, concurrency: 4, batchSize: 10 };
    const began = Date.now();
    const reports = await Promise.all([
      runSweep(sweepDeps(h, h.store, verifyClient, 'a'), { ...cap, owner: 'a' }),
      runSweep(sweepDeps(h, other, verifyClient, 'b'), { ...cap, owner: 'b' }),
    ]);
    const seconds = (Date.now() - began) / 1000;
    expect(reports[0]!.fulfilled + reports[1]!.fulfilled).toBe(40);
    expect(reports[0]!.reads).toBeGreaterThan(0);
    expect(reports[1]!.reads).toBeGreaterThan(0);
    // 40 reads at 16 a second together, after a saved-up burst of about 3: at least 2.3 s.
    expect(seconds).toBeGreaterThan(2.1);
    expect(await h.duplicateEffects()).toEqual([]);
  });

  it('reads no attempt twice when a slow pace outlasts the claims: what a lease cannot cover is left to the next claim', async () => {
    h = await kind.open();
    const other = await h.openAnother();
    await verifiedAttempts(emu, h.store, verifyClient, 12);
    const readsBefore = (await emu.control.stats()).statusReads;
    // 12 reads at 4 a second take 3 s; each claim holds its batch for 1 s.
    const slow = { maxReadsPerSecond: 4, concurrency: 2, batchSize: 12, leaseMs: 1000 };
    const until = Date.now() + 20_000;
    // Two sweep processes, each running again as soon as its run ends, until every attempt is fulfilled.
    const processRuns = async (store: VerifyStore<unknown>, owner: string) => {
      const reports = [];
      while ((await h.countEffects()) < 12 && Date.now() < until) {
        reports.push(await runSweep(sweepDeps(h, store, verifyClient, owner), { ...slow, owner }));
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return reports;
    };
    const reports = (await Promise.all([processRuns(h.store, 'a'), processRuns(other, 'b')])).flat();
    expect(await h.countEffects()).toBe(12);
    expect(await h.duplicateEffects()).toEqual([]);
    // Every status read was paid once: an attempt whose lease ran out before its turn was not read by
    // the process that held it (its batch outlasted the claim), only by the next claim.
    expect((await emu.control.stats()).statusReads - readsBefore).toBe(12);
    expect(reports.reduce((n, r) => n + r.reads, 0)).toBe(12);
    expect(reports.reduce((n, r) => n + r.leftToLapse, 0)).toBeGreaterThan(0);
  });
});
