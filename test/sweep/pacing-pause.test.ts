/**
 * The shared pace across a pause between sweep runs (middleware/sweep/pacing.ts and the stores'
 * `updateSweepPace` row): the rate grows only with reads actually made, so an idle minute (the
 * worker's interval) or nine do not inflate it, and a 429 records as the limit no more than the
 * reads the service was seen to answer. Driven on the test clock against a simulated service
 * limit (the emulator's token bucket: R a second, one second saved up), on every store.
 */
import { afterEach, expect, it } from 'vitest';
import { KitError, KitErrorCode } from '../../middleware/errors.ts';
import { createPacer } from '../../middleware/sweep/pacing.ts';
import type { VerifyStore } from '../../middleware/store/types.ts';
import { describeEachStore, type StoreUnderTest } from '../support/stores.ts';

/**
 * A clock that moves only when told: the emulator's test clock also follows real time, and on a
 * busy machine a store's write would then cost simulated seconds.
 */
interface TestClock {
  now(): number;
  advance(seconds: number): void;
}

function createTestClock(): TestClock {
  let at = 1_700_000_000_000;
  return {
    now: () => at,
    advance: (seconds) => {
      at += seconds * 1000;
    },
  };
}

const busy = new KitError(KitErrorCode.ServiceBusy, 'busy', { serviceStatus: 429, retryAfterSeconds: 1 });

/** The service's limit as the emulator keeps it: `perSecond` tokens a second, a second's worth saved up. */
function serviceLimit(clock: TestClock, perSecond: number) {
  let tokens = perSecond;
  let at = clock.now();
  return () => {
    tokens = Math.min(perSecond, tokens + ((clock.now() - at) / 1000) * perSecond);
    at = clock.now();
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  };
}

interface RunFigures {
  reads: number;
  limited: number;
  /** The most reads answered within any one second of the run. */
  answeredPeak: number;
}

/**
 * One sweep run of `seconds` on the test clock: a read takes 10 ms (100 a second at most), each
 * after a permit of the run's own pacer; a 429 is reported to the pacer as the sweep does.
 */
async function sweepRun(
  store: VerifyStore<unknown>,
  clock: TestClock,
  answer: () => boolean,
  seconds: number,
  attempts = Infinity,
): Promise<RunFigures> {
  const end = clock.now() + seconds * 1000;
  const pacer = createPacer({
    store,
    deadline: end,
    now: () => clock.now(),
    wait: async (ms) => clock.advance(ms / 1000),
  });
  const answered: number[] = [];
  let reads = 0;
  let limited = 0;
  let answeredPeak = 0;
  while (reads < attempts && clock.now() < end && (await pacer.acquire())) {
    reads++;
    clock.advance(0.01);
    if (answer()) {
      answered.push(clock.now());
      while ((answered[0] ?? Infinity) <= clock.now() - 1000) answered.shift();
      answeredPeak = Math.max(answeredPeak, answered.length);
    } else {
      limited++;
      await pacer.limited(busy);
    }
  }
  return { reads, limited, answeredPeak };
}

describeEachStore('the sweep pace across pauses', (kind) => {
  let h: StoreUnderTest;
  afterEach(async () => {
    await h?.dispose();
  });

  it('20 s runs a minute apart against a 20/s limit: 429s stay under 2% of reads and the limit learned is what was answered', async () => {
    h = await kind.open();
    const clock = createTestClock();
    const answer = serviceLimit(clock, 20);
    // The first run has 40 due attempts: it meets the limit once, and is done before it learns it.
    const first = await sweepRun(h.store, clock, answer, 30, 40);
    expect(first.limited).toBeGreaterThan(0);
    const runs: RunFigures[] = [];
    for (let i = 0; i < 2; i++) {
      clock.advance(60);
      runs.push(await sweepRun(h.store, clock, answer, 20));
    }
    const pace = await h.store.updateSweepPace!(() => undefined);
    const figures = JSON.stringify({ first, runs, pace });
    for (const run of runs) {
      expect(run.limited, figures).toBeLessThanOrEqual(0.02 * run.reads);
      // The limit is what the service answered, not a rate nobody read at.
      expect(pace.limitPerSecond, figures).toBeLessThanOrEqual(run.answeredPeak);
    }
    expect(pace.limitPerSecond, figures).toBeGreaterThanOrEqual(20 / 1.5);
    expect(pace.limitPerSecond, figures).toBeLessThanOrEqual(20 * 1.5);
    // And the runs still read near the limit (most of the 20 a second, 20 s each).
    for (const run of runs) expect(run.reads, figures).toBeGreaterThan(0.6 * 20 * 20);
    // Every read is a write of the row on the store: a few thousand transactions on a busy machine.
  }, 180_000);

  it('nine idle minutes with a known limit leave the rate where it was, give or take a second of growth', async () => {
    h = await kind.open();
    const clock = createTestClock();
    const t = clock.now();
    // Backdated: learned 24.5 a second, cut 9.5 minutes ago, last permits taken 9 minutes ago.
    await h.store.updateSweepPace!(() => ({
      ratePerSecond: 22,
      limitPerSecond: 24.5,
      pausedUntil: 0,
      cutAt: t - 570_000,
      tokens: 0,
      tokensAt: t - 540_000,
      readsGranted: 0,
    }));
    const pacer = createPacer({ store: h.store, now: () => clock.now(), wait: async (ms) => clock.advance(ms / 1000) });
    expect(await pacer.acquire()).toBe(true);
    const pace = await h.store.updateSweepPace!(() => undefined);
    expect(pace.ratePerSecond).toBeLessThanOrEqual(22 + 0.05 * 24.5);
    // A 429 now records no limit above the reads actually made.
    await pacer.limited(busy);
    const cut = await h.store.updateSweepPace!(() => undefined);
    expect(cut.limitPerSecond).toBeLessThanOrEqual(24.5);
  });
});
