/**
 * The simulated day's traffic model and the naive integration counted over it (bench/phases/
 * day-model.ts): the figures the polling targets are judged on follow from these alone.
 */
import { describe, expect, it } from 'vitest';
import {
  classFigures,
  DAY_MS,
  dayModel,
  MINUTE_MS,
  naiveFigures,
  OUTCOME_CLASSES,
  peakOf,
  type ModelAttempt,
} from '../../bench/phases/day-model.ts';

const share = (model: ModelAttempt[], test: (m: ModelAttempt) => boolean) => model.filter(test).length / model.length;

describe('dayModel', () => {
  it('draws the same day from the same seed, and another from another seed', () => {
    expect(dayModel(500, 45)).toEqual(dayModel(500, 45));
    expect(dayModel(500, 46)).not.toEqual(dayModel(500, 45));
  });

  it('splits starts into the four outcome classes at their shares, all within the day', () => {
    const model = dayModel(20_000, 7);
    const expected = { lands: 0.55, verifiedNeverReturns: 0.1, fails: 0.05, abandons: 0.3 };
    for (const cls of OUTCOME_CLASSES) expect(share(model, (m) => m.cls === cls)).toBeCloseTo(expected[cls], 1);
    expect(model.every((m) => m.startAt >= 0 && m.startAt < DAY_MS)).toBe(true);
  });

  it('verifies most users before the first sweep read, with a long tail up to 12 h; landings come after', () => {
    const verified = dayModel(20_000, 11).filter((m) => m.cls === 'lands' || m.cls === 'verifiedNeverReturns');
    // Log-normal around a minute: about 86 % of the 97 % outside the tail within 3 minutes.
    expect(share(verified, (m) => m.outcomeAfterMs! < 3 * MINUTE_MS)).toBeGreaterThan(0.8);
    expect(share(verified, (m) => m.outcomeAfterMs! < 3 * MINUTE_MS)).toBeLessThan(0.88);
    const tail = share(verified, (m) => m.outcomeAfterMs! >= 15 * MINUTE_MS);
    expect(tail).toBeGreaterThan(0.02);
    expect(tail).toBeLessThan(0.05);
    expect(verified.every((m) => m.outcomeAfterMs! <= 12 * 60 * MINUTE_MS)).toBe(true);
    const landed = verified.filter((m) => m.cls === 'lands');
    expect(landed.every((m) => m.landsAfterMs! >= m.outcomeAfterMs! + 2000)).toBe(true);
    expect(landed.every((m) => m.landsAfterMs! <= m.outcomeAfterMs! + 20_000)).toBe(true);
  });

  it('gives an abandoned attempt no outcome and no landing', () => {
    const abandoned = dayModel(2000, 3).filter((m) => m.cls === 'abandons');
    expect(abandoned.length).toBeGreaterThan(0);
    expect(abandoned.every((m) => m.outcomeAfterMs === undefined && m.landsAfterMs === undefined)).toBe(true);
  });
});

describe('naiveFigures: a cron reading every pending attempt each minute', () => {
  const one = (m: ModelAttempt) => naiveFigures([m]);

  it('reads an abandoned attempt every minute of its 24 h, never at or after its end', () => {
    // Started between two minutes: 1440 minute marks fall inside its window.
    expect(one({ cls: 'abandons', startAt: 30_000 }).classes.abandons.readsPerAttempt).toBe(1440);
    // Started on a minute mark: the mark 24 h later is its window's end, not inside it.
    expect(one({ cls: 'abandons', startAt: 0 }).classes.abandons.readsPerAttempt).toBe(1439);
  });

  it('fulfils a user who verified and never returned at the first minute mark after the verification', () => {
    const figures = one({ cls: 'verifiedNeverReturns', startAt: 10_000, outcomeAfterMs: 90_000 });
    // Minute marks at ages 50 s (pending) and 110 s (verified 20 s before).
    expect(figures.classes.verifiedNeverReturns).toMatchObject({ readsPerAttempt: 2, delayMedianS: 20, delayMaxS: 20 });
  });

  it('stops reading an attempt once its user landed', () => {
    const early = { cls: 'lands' as const, startAt: 10_000, outcomeAfterMs: 20_000, landsAfterMs: 30_000 };
    expect(one(early).classes.lands.readsPerAttempt).toBe(0);
    const late = { cls: 'lands' as const, startAt: 10_000, outcomeAfterMs: 100_000, landsAfterMs: 115_000 };
    expect(one(late).classes.lands.readsPerAttempt).toBe(2);
  });

  it('counts the busiest minute and scales it to 100 000 starts a day', () => {
    const model: ModelAttempt[] = Array.from({ length: 10 }, () => ({ cls: 'abandons', startAt: 30_000 }));
    expect(naiveFigures(model)).toMatchObject({ peakReadsPerSecond: 0.17, peakReadsPerSecondAt100k: 1666.7 });
  });
});

describe('classFigures and peakOf', () => {
  it('gives reads per attempt by class, and the delays of the never-returned at their median, p95 and max', () => {
    const model: ModelAttempt[] = [
      ...Array.from({ length: 20 }, (_, i) => ({ cls: 'verifiedNeverReturns' as const, startAt: i })),
      { cls: 'abandons', startAt: 0 },
    ];
    const reads = [...Array.from({ length: 20 }, () => 2), 16];
    const delays = [...Array.from({ length: 20 }, (_, i) => (i + 1) * 1000), undefined];
    const figures = classFigures(model, reads, delays);
    expect(figures.verifiedNeverReturns).toEqual({
      attempts: 20,
      readsPerAttempt: 2,
      delayMedianS: 11,
      delayP95S: 20,
      delayMaxS: 20,
    });
    expect(figures.abandons).toEqual({ attempts: 1, readsPerAttempt: 16 });
    expect(figures.lands).toEqual({ attempts: 0, readsPerAttempt: 0 });
  });

  it('takes the busiest minute, not the sum', () => {
    expect(
      peakOf(
        new Map([
          [1, 60],
          [2, 600],
          [3, 6],
        ]),
        1000,
      ),
    ).toEqual({
      peakReadsPerSecond: 10,
      peakReadsPerSecondAt100k: 1000,
    });
  });
});
