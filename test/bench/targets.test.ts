/**
 * How the bench judges its targets (bench/targets.ts): the polling targets against the baseline
 * schedule of the same run, the rate-limited landings' p99 against the hand-written floor's on the
 * median of three rounds or more, the typed-number start against its hand-written baseline, the
 * apps' CPU per request, and the sweeps' CPU per fulfilled attempt against their hand-written floors.
 */
import { describe, expect, it } from 'vitest';
import type { ClassFigures, DayFigures, ScheduleFigures } from '../../bench/phases/day-model.ts';
import type { Comparison, SideFigures } from '../../bench/phases/interleaved.ts';
import type { PgSweepFigures } from '../../bench/phases/pg-sweep.ts';
import type { PumpingCostFigures, PumpingCostRun } from '../../bench/phases/pumping-cost.ts';
import type { RateLimitedFigures } from '../../bench/phases/rate-limited-figures.ts';
import type { SweepFigures } from '../../bench/phases/sweep.ts';
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
    // The floor's ratio is 1 in every round unless a test sets it: the kit's ratio is then its ratio over the floor's.
    rounds: ratios.map((p99Ratio) => ({
      alone: stream,
      withSweep: stream,
      p99Ratio,
      floor: { alone: stream, withFloor: stream, p99Ratio: 1, readsPerSecond: 250 },
    })),
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
    expect(p99Target(rateLimited([1.05, 1.9, 1.1])).met).toBe(true);
    expect(p99Target(rateLimited([1.05, 1.11, 1.3])).met).toBe(false);
    // Fewer than three rounds are not judged, however good.
    expect(p99Target(rateLimited([0.9, 1.0]))).toMatchObject({
      met: false,
      target: '<= 1.10, judged on 3 rounds or more',
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

describe("the SMS pumping rules' cost to a start", () => {
  const run = (
    store: PumpingCostRun['store'],
    p50: number[],
    p99: number[],
    extra: { errors?: number; counted?: PumpingCostRun['counted'] } = {},
  ): PumpingCostRun => ({
    store,
    comparison: comparison(`pumping-cost ${store}`, p50, p99, extra.errors ?? 0),
    counted: extra.counted ?? { on: 6401, off: 0 },
    started: { on: 6401, off: 6401 },
  });
  const costTargets = (...runs: PumpingCostRun[]) =>
    targetsOf({
      pumpingCost: {
        history: { sends: 60_000, verified: 52_000, countRows: 250_000 },
        runs,
      } satisfies PumpingCostFigures,
    });

  it('judges p50 and p99 of a start, rules on over rules off, at 1.10 on the median round, per store', () => {
    const targets = costTargets(
      run('sqlite', [1.3, 1.1, 1.0], [1.0, 1.08, 1.5]),
      run('postgres', [1.11, 1.2, 1.0], [1.0, 1.12, 1.3]),
    );
    expect(find(targets, 'pumping-cost sqlite: p50')).toMatchObject({ met: true, target: '<= 1.10' });
    expect(find(targets, 'pumping-cost sqlite: p99')).toMatchObject({ met: true, target: '<= 1.10' });
    expect(find(targets, 'pumping-cost postgres: p50').met).toBe(false);
    expect(find(targets, 'pumping-cost postgres: p99').met).toBe(false);
  });

  it('meets nothing when a start failed, or when the rules did not count every start of the rules-on app only', () => {
    const failed = costTargets(run('sqlite', [1, 1, 1], [1, 1, 1], { errors: 2 }));
    expect(find(failed, 'pumping-cost sqlite: p50').met).toBe(false);
    expect(find(failed, 'pumping-cost sqlite: every start answered').met).toBe(false);
    for (const counted of [
      { on: 0, off: 0 },
      { on: 6400, off: 0 },
      { on: 6401, off: 1 },
    ]) {
      const targets = costTargets(run('postgres', [1, 1, 1], [1, 1, 1], { counted }));
      expect(find(targets, 'pumping-cost postgres: p99').met).toBe(false);
      expect(find(targets, 'pumping-cost postgres: every start answered')).toMatchObject({
        met: false,
        value: `0 errors; ${counted.on} counted / ${counted.off}`,
      });
    }
    const counted = costTargets(run('postgres', [1, 1, 1], [1, 1, 1]));
    expect(find(counted, 'pumping-cost postgres: every start answered').met).toBe(true);
  });
});

describe('the start and landing CPU targets', () => {
  const cpuTarget = (kitCpu: number, baselineCpu: number, errors = 0) => {
    const c = comparison('landing', [1, 1, 1], [1, 1, 1], errors);
    const priced: Comparison = {
      ...c,
      kit: { ...c.kit, appCpuMsPerRequest: kitCpu },
      baseline: { ...c.baseline, appCpuMsPerRequest: baselineCpu },
      ratio: { ...c.ratio, appCpu: Math.round((kitCpu / baselineCpu) * 1000) / 1000 },
    };
    return find(targetsOf({ landing: priced }), 'landing: app process CPU ms per request');
  };

  it("judges the app process's CPU per request, kit over baseline, at 1.10", () => {
    expect(cpuTarget(1.1, 1)).toMatchObject({ met: true, target: '<= 1.10', value: '1.100 (1.1 / 1)' });
    expect(cpuTarget(1.11, 1).met).toBe(false);
  });

  it('counts the CPU ratio as not met when a request was answered otherwise than expected', () => {
    expect(cpuTarget(1, 1, 2).met).toBe(false);
  });

  it('judges start, typed-number start and PostgreSQL landing alike', () => {
    for (const what of ['start', 'start-entered', 'pg-landing']) {
      const c = comparison(what, [1, 1, 1], [1, 1, 1]);
      const dearer = { ...c, ratio: { ...c.ratio, appCpu: 1.2 } };
      const key = what === 'start' ? 'start' : what === 'start-entered' ? 'startEntered' : 'pgLanding';
      expect(find(targetsOf({ [key]: c }), `${what}: app process CPU`).met).toBe(true);
      expect(find(targetsOf({ [key]: dearer }), `${what}: app process CPU`).met).toBe(false);
    }
  });
});

describe("the rate-limited landings against the hand-written floor's", () => {
  /** Rounds whose kit and floor p99 ratios are given in pairs. */
  const beside = (pairs: [kit: number, floor: number][]) => {
    const base = rateLimited(pairs.map(([kit]) => kit));
    const rounds = base.rounds.map((round, i) => ({
      ...round,
      floor: { alone: round.alone, withFloor: round.withSweep, p99Ratio: pairs[i]![1], readsPerSecond: 250 },
    }));
    return p99Target({ ...base, rounds, floor: { ...base.floor, p99RatioSpread: spreadOf(pairs.map(([, f]) => f)) } });
  };

  it("judges the median round's kit ratio over the floor's ratio of the same round at 1.10", () => {
    // Over the floor: 1.1, 1.0, 2.0 -> median 1.1.
    expect(
      beside([
        [1.65, 1.5],
        [1.2, 1.2],
        [2.0, 1.0],
      ]),
    ).toMatchObject({ met: true, target: '<= 1.10' });
    // Over the floor: 1.2, 1.0, 1.15 -> median 1.15, though the kit's own ratios' median (1.3) is below the floors' times 1.1.
    expect(
      beside([
        [1.8, 1.5],
        [1.3, 1.3],
        [1.15, 1.0],
      ]).met,
    ).toBe(false);
  });

  it('pairs each round with its own floor, not the median of the other rounds', () => {
    // Over the floor round by round: 1.0, 1.053, 2.0 -> median 1.053, though the medians alone (kit 2.0, floor 1.0) are twice apart.
    expect(
      beside([
        [1.0, 1.0],
        [2.0, 1.9],
        [2.0, 1.0],
      ]).met,
    ).toBe(true);
  });

  it('judges nothing when a round measured no landing on either side (a ratio of NaN)', () => {
    expect(
      beside([
        [1.0, 1.0],
        [1.0, 1.0],
        [Number.NaN, Number.NaN],
      ]).met,
    ).toBe(false);
  });

  it('judges no fewer than three rounds', () => {
    expect(
      beside([
        [1, 1],
        [1, 1],
      ]),
    ).toMatchObject({ met: false, target: '<= 1.10, judged on 3 rounds or more' });
  });
});

function sqliteSweep(cpu: [kit: number, floor: number][], overrides: Partial<SweepFigures> = {}): SweepFigures {
  const report = { fulfilled: 10_000, reads: 10_000 } as SweepFigures['report'];
  const cpuRounds = cpu.map(([kit, floor]) => ({
    kitCpuMsPerFulfilled: kit,
    floorCpuMsPerFulfilled: floor,
    kitOverFloorRate: 0.9,
  }));
  return {
    attempts: 10_000,
    report,
    grants: 10_000,
    fractionOfRaw: 0.5,
    roundFractions: [0.5, 0.6, 0.4],
    sweepCpuMsPerAttempt: 0.4,
    emulatorCpuMsPerRead: 0.1,
    rawClientCpuMsPerRead: 0.2,
    emulatorCpuMsPerRawRead: 0.1,
    kitCpuMsPerFulfilled: cpu[0]![0],
    floor: { attemptsPerSecond: 2000, cpuMsPerFulfilled: cpu[0]![1], fulfilled: 10_000, grants: 10_000, errors: 0 },
    cpuRounds,
    kitOverFloorCpu: spreadOf(
      cpuRounds.map((r) => Math.round((r.kitCpuMsPerFulfilled / r.floorCpuMsPerFulfilled) * 1000) / 1000),
    ),
    floorEveryRoundOnce: true,
    ...overrides,
  } as SweepFigures;
}

describe('the sweep targets by work', () => {
  const cpuTarget = (s: SweepFigures) => find(targetsOf({ sweep: [s] }), 'sweep 10000: CPU ms per fulfilled attempt');

  it("judges the SQLite sweep's CPU per fulfilled attempt over the floor's on the median run, at 1.15", () => {
    expect(
      cpuTarget(
        sqliteSweep([
          [0.46, 0.4],
          [0.6, 0.4],
          [0.4, 0.4],
        ]),
      ),
    ).toMatchObject({ met: true, target: '<= 1.15' });
    expect(
      cpuTarget(
        sqliteSweep([
          [0.464, 0.4],
          [0.6, 0.4],
          [0.4, 0.4],
        ]),
      ).met,
    ).toBe(false);
  });

  it('no longer judges the rate over raw capacity, which it prints as information', () => {
    const targets = targetsOf({
      sweep: [
        sqliteSweep(
          [
            [0.4, 0.4],
            [0.4, 0.4],
            [0.4, 0.4],
          ],
          { fractionOfRaw: 0.3 },
        ),
      ],
    });
    expect(targets.every((t) => t.met)).toBe(true);
    expect(cpuTarget(sqliteSweep([[0.4, 0.4]], { fractionOfRaw: 0.3 })).value).toContain('rate / raw capacity 0.300');
  });

  it('fails when the floor missed or doubled an attempt, and the CPU ratio with it', () => {
    const short = sqliteSweep([[0.4, 0.4]], { floorEveryRoundOnce: false });
    expect(find(targetsOf({ sweep: [short] }), 'floor fulfilled every attempt once').met).toBe(false);
    expect(cpuTarget(short).met).toBe(false);
  });

  const pg = (cpu: [kit: number, floor: number][], overrides: Partial<PgSweepFigures> = {}): PgSweepFigures =>
    ({
      attempts: 100_000,
      processes: 2,
      grants: 100_000,
      distinctGrants: 100_000,
      fulfilledByProcess: [50_000, 50_000],
      floorGrants: 'each',
      everyRoundOnce: true,
      kitOverFloor: 0.5,
      kitOverFloorSpread: spreadOf([0.5, 0.5, 0.5]),
      kitOverFloorCpu: spreadOf(cpu.map(([k, f]) => Math.round((k / f) * 1000) / 1000)),
      perRound: cpu.map(([kit, floor]) => ({
        kitRate: 1000,
        floorRate: 2000,
        kitOverFloor: 0.5,
        kitFractionOfRaw: 0.4,
        floorFractionOfRaw: 0.8,
        kitCpuMsPerAttempt: kit,
        floorCpuMsPerAttempt: floor,
      })),
      ...overrides,
    }) as PgSweepFigures;
  const pgCpuTarget = (p: PgSweepFigures) => find(targetsOf({ pgSweep: p }), 'pg-sweep 100000: CPU ms per fulfilled');

  it("judges the PostgreSQL sweep's CPU per attempt (processes + backends) over the floor's at 1.15, not its rate", () => {
    expect(
      pgCpuTarget(
        pg([
          [0.345, 0.3],
          [0.5, 0.3],
          [0.3, 0.3],
        ]),
      ),
    ).toMatchObject({ met: true, target: '<= 1.15' });
    expect(
      pgCpuTarget(
        pg([
          [0.35, 0.3],
          [0.5, 0.3],
          [0.3, 0.3],
        ]),
      ).met,
    ).toBe(false);
    // Against the batched floor, or with a round that did not fulfil every attempt once, nothing is met.
    expect(pgCpuTarget(pg([[0.3, 0.3]], { floorGrants: 'batched' })).met).toBe(false);
    expect(pgCpuTarget(pg([[0.3, 0.3]], { everyRoundOnce: false })).met).toBe(false);
  });
});
