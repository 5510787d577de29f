/**
 * How the bench judges its targets (bench/targets.ts): the polling targets against the baseline
 * schedule of the same run, the rate-limited landings' p99 on the median of three rounds or more, and
 * the typed-number start against its hand-written baseline.
 */
import { describe, expect, it } from 'vitest';
import type { ClassFigures, DayFigures, ScheduleFigures } from '../../bench/phases/day-model.ts';
import type { Comparison, SideFigures } from '../../bench/phases/interleaved.ts';
import type { RateLimitedFigures } from '../../bench/phases/rate-limited-figures.ts';
import { targetsOf, type Target } from '../../bench/targets.ts';
import { spreadOf } from '../../bench/measure.ts';

function schedule(
  abandonedReads: number,
  delay: { median: number; p95: number },
  overrides: Partial<ScheduleFigures> = {},
) {
  const cls = (readsPerAttempt: number, extra: Partial<ClassFigures> = {}): ClassFigures => ({
    attempts: 10,
    readsPerAttempt,
    ...extra,
  });
  return {
    classes: {
      lands: cls(0.7),
      verifiedNeverReturns: cls(1.3, { delayMedianS: delay.median, delayP95S: delay.p95, delayMaxS: delay.p95 }),
      fails: cls(1.2),
      abandons: cls(abandonedReads),
    },
    peakReadsPerSecond: 0.1,
    peakReadsPerSecondAt100k: 18,
    readsOutsideWindow: 0,
    wronglyFulfilled: 0,
    rateLimited: 0,
    runsStopped: 0,
    ...overrides,
  } satisfies ScheduleFigures;
}

function day(kit: ScheduleFigures, baseline: ScheduleFigures): DayFigures {
  return {
    starts: 1000,
    seed: 45,
    readLimitPerSecond: 300,
    sweepIntervalMs: 60_000,
    kit,
    baseline,
    naive: schedule(1440, { median: 30, p95: 58 }),
    loadAverage: [0, 0, 0],
  };
}

const BASELINE = schedule(54, { median: 166.1, p95: 218.6 });
const find = (targets: Target[], words: string) => {
  const target = targets.find((t) => t.name.includes(words));
  if (target === undefined) throw new Error(`no target named like "${words}"`);
  return target;
};
const dayTarget = (kit: ScheduleFigures, words: string, baseline = BASELINE) =>
  find(targetsOf({ day: day(kit, baseline) }), words);

describe('the day targets', () => {
  it('meets reads per abandoned attempt at a third of the baseline and at most 16, and not above either', () => {
    const words = 'reads per abandoned attempt';
    expect(dayTarget(schedule(16, { median: 160, p95: 210 }), words).met).toBe(true);
    expect(dayTarget(schedule(16.01, { median: 160, p95: 210 }), words).met).toBe(false);
    // A baseline of 45 reads: a third of it (15) is the stricter bound.
    const cheaper = schedule(45, { median: 166.1, p95: 218.6 });
    expect(dayTarget(schedule(15, { median: 160, p95: 210 }), words, cheaper).met).toBe(true);
    expect(dayTarget(schedule(15.5, { median: 160, p95: 210 }), words, cheaper)).toMatchObject({
      met: false,
      target: '<= 15',
    });
  });

  it('meets the delay to fulfilment only when both its median and its p95 are no worse than the baseline', () => {
    const words = 'delay to fulfilment';
    expect(dayTarget(schedule(16, { median: 166.1, p95: 218.6 }), words).met).toBe(true);
    expect(dayTarget(schedule(16, { median: 166.2, p95: 200 }), words).met).toBe(false);
    expect(dayTarget(schedule(16, { median: 100, p95: 218.7 }), words).met).toBe(false);
  });

  it('fails every schedule-wide check on a single wrong fulfilment, read outside the window or 429', () => {
    const ok = { median: 160, p95: 210 };
    expect(dayTarget(schedule(16, ok, { wronglyFulfilled: 1 }), 'fulfilled once').met).toBe(false);
    expect(dayTarget(schedule(16, ok, { readsOutsideWindow: 1 }), 'outside').met).toBe(false);
    expect(dayTarget(schedule(16, ok, { rateLimited: 1 }), 'model and its seed alone').met).toBe(false);
    expect(dayTarget(schedule(16, ok), 'model and its seed alone', schedule(54, ok, { runsStopped: 1 })).met).toBe(
      false,
    );
    for (const words of ['fulfilled once', 'outside', 'model and its seed alone'])
      expect(dayTarget(schedule(16, ok), words).met).toBe(true);
  });
});

function rateLimited(ratios: number[], overrides: Partial<RateLimitedFigures> = {}): RateLimitedFigures {
  const stream = { landings: 100, statuses: { '303': 100 }, p50: 4, p99: 10 };
  return {
    limitPerSecond: 300,
    attempts: 20_000,
    processes: 2,
    rounds: ratios.map((p99Ratio) => ({ alone: stream, withSweep: stream, p99Ratio })),
    p99RatioSpread: spreadOf(ratios),
    pooledP99Ratio: 1,
    alone: stream,
    withSweep: stream,
    fulfilledByProcess: [10_000, 10_000],
    grants: 20_000,
    distinctGrants: 20_000,
    landingGrants: 900,
    landingDistinctGrants: 900,
    sweepRate: 250,
    targetRate: 212.5,
    landingReadsPerSecond: 50,
    runs: 3,
    learnedLimits: [300, 290, 285],
    reads: 24_000,
    limited: 20,
    limitedShare: 20 / 24_000,
    floor: {
      p99RatioSpread: spreadOf([1.5, 1.6, 1.7]),
      pooledP99Ratio: 1.6,
      readsPerSecond: 250,
      fulfilled: 20_000,
      limited: 0,
      errors: 0,
      cpuMsPerRead: 0.5,
    },
    ...overrides,
  } as RateLimitedFigures;
}

const p99Target = (figures: RateLimitedFigures) => find(targetsOf({ rateLimited: figures }), 'landing p99');

describe('the rate-limited targets', () => {
  it("judges the landings' p99 ratio on the median of the rounds, never on one round", () => {
    expect(p99Target(rateLimited([1.1, 1.9, 1.19])).met).toBe(true);
    expect(p99Target(rateLimited([1.1, 1.21, 1.3])).met).toBe(false);
    // Fewer than three rounds are not judged, however good.
    expect(p99Target(rateLimited([0.9, 1.0]))).toMatchObject({
      met: false,
      target: '<= 1.20, judged on 3 rounds or more',
    });
  });

  it('fails exactly-once on a missing or a doubled grant, and the rate below 0.85 of what the landings leave', () => {
    const targets = (overrides: Partial<RateLimitedFigures>) =>
      targetsOf({ rateLimited: rateLimited([1, 1, 1], overrides) });
    expect(find(targets({}), 'every attempt fulfilled once').met).toBe(true);
    expect(find(targets({ distinctGrants: 19_999 }), 'every attempt fulfilled once').met).toBe(false);
    expect(find(targets({ landingGrants: 901 }), 'at most once').met).toBe(false);
    expect(find(targets({ sweepRate: 212.4 }), 'sweep rate').met).toBe(false);
    expect(find(targets({ limitedShare: 0.021 }), 'answered 429').met).toBe(false);
    expect(find(targets({ learnedLimits: [300, 451] }), 'limit the shared pace learned').met).toBe(false);
  });
});

function comparison(what: string, p50Ratios: number[], p99Ratios: number[], errors = 0): Comparison {
  const side = (extra: Partial<SideFigures> = {}): SideFigures => ({
    requests: 6000,
    ok: 6000,
    errors: 0,
    statuses: { '200': 6000 },
    rps: 400,
    p50: 10,
    p90: 14,
    p99: 20,
    max: 40,
    appCpuMsPerRequest: 1,
    emulatorCpuMsPerRequest: 0.5,
    ...extra,
  });
  return {
    what,
    concurrency: 8,
    rounds: p50Ratios.length,
    roundRequests: 600,
    kit: side({ errors }),
    baseline: side(),
    ratio: { p50: 1, p99: 1, rps: 1, appCpu: 1 },
    perRound: { p50: p50Ratios, p99: p99Ratios },
    spread: { p50: spreadOf(p50Ratios), p99: spreadOf(p99Ratios) },
  };
}

describe('the typed-number start targets', () => {
  const enteredTargets = (p50: number[], p99: number[], errors = 0) =>
    targetsOf({ startEntered: comparison('start-entered', p50, p99, errors) });

  it('judges kit/baseline p50 and p99 of a start with a typed number at 1.10, on the median of the rounds', () => {
    const targets = enteredTargets([1.3, 1.05, 1.1], [1.08, 1.5, 1.0]);
    expect(find(targets, 'start-entered: kit/baseline p50')).toMatchObject({ met: true, target: '<= 1.10' });
    expect(find(targets, 'start-entered: kit/baseline p99')).toMatchObject({ met: true, target: '<= 1.10' });
    const slower = enteredTargets([1.11, 1.12, 1.0], [1.0, 1.2, 1.15]);
    expect(find(slower, 'start-entered: kit/baseline p50').met).toBe(false);
    expect(find(slower, 'start-entered: kit/baseline p99').met).toBe(false);
  });

  it('counts no ratio as met when a request was answered otherwise than expected', () => {
    const targets = enteredTargets([1, 1, 1], [1, 1, 1], 3);
    expect(find(targets, 'start-entered: kit/baseline p50').met).toBe(false);
    expect(find(targets, 'start-entered: every request answered as expected')).toMatchObject({
      met: false,
      value: '3',
    });
  });
});
