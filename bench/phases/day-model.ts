/**
 * The simulated day's traffic model (who starts when, and what each user does), its figures, and
 * the naive integration counted over the same traffic.
 */
import { SWEEP_WINDOW_MS } from '../../middleware/sweep/sweep-options.ts';
import { round1, round2 } from '../measure.ts';

export const OUTCOME_CLASSES = ['lands', 'verifiedNeverReturns', 'fails', 'abandons'] as const;
export type OutcomeClass = (typeof OUTCOME_CLASSES)[number];

/** The traffic model's shares of starts. */
const SHARES: Record<OutcomeClass, number> = { lands: 0.55, verifiedNeverReturns: 0.1, fails: 0.05, abandons: 0.3 };
/** The previous default schedule, through `backoffMs` (first read at 3 min either way). */
export const BASELINE_BACKOFF_MS = [30_000, 60_000, 120_000, 300_000, 600_000, 1_800_000];
export const FIRST_CHECK_AFTER_MS = 3 * 60_000;
export const SWEEP_INTERVAL_MS = 60_000;
export const MINUTE_MS = 60_000;
export const DAY_MS = 24 * 60 * MINUTE_MS;
/** The starts a day the peak read rate is scaled to. */
const SCALED_STARTS_PER_DAY = 100_000;

export interface ModelAttempt {
  cls: OutcomeClass;
  /** Ms after the day began. */
  startAt: number;
  /** When the user verified (lands, verifiedNeverReturns) or failed (fails), ms after the start. */
  outcomeAfterMs?: number;
  /** When the user's browser came back (lands), ms after the start. */
  landsAfterMs?: number;
}

export interface ClassFigures {
  attempts: number;
  /** Status reads the sweep (or the naive cron) made for these attempts, per attempt. */
  readsPerAttempt: number;
  /** verifiedNeverReturns only: seconds from verification to fulfilment. */
  delayMedianS?: number;
  delayP95S?: number;
  delayMaxS?: number;
}

export interface ScheduleFigures {
  classes: Record<OutcomeClass, ClassFigures>;
  /** Status reads (sweep and landings) in the busiest virtual minute, per second, and scaled to 100 000 starts a day. */
  peakReadsPerSecond: number;
  peakReadsPerSecondAt100k: number;
  /** Reads at or after an attempt's 24 h (or before its start): must be 0. */
  readsOutsideWindow: number;
  /** Attempts whose action ran other than once if they verified, or at all if not: must be 0. */
  wronglyFulfilled: number;
  /**
   * Reads answered 429 (the read limit, on the day's clock), and sweep runs that stopped on their
   * time budget (real time): while both are 0 the figures follow from the model and its seed alone
   * (after a 429 the kit's pacer waits in real time, and which of the reads in flight met it is
   * up to the machine).
   */
  rateLimited: number;
  runsStopped: number;
  wallSeconds?: number;
}

export interface DayFigures {
  starts: number;
  seed: number;
  readLimitPerSecond: number;
  sweepIntervalMs: number;
  kit: ScheduleFigures;
  baseline: ScheduleFigures;
  /** Counted over the same traffic, not run: a cron reading every pending attempt each minute. */
  naive: ScheduleFigures;
  loadAverage: number[];
}

/** A small seeded generator (mulberry32), so every run draws the same day. */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The traffic: when each attempt starts and what its user does. Verification comes a log-normal
 * delay after the start (median 60 s; about 86 % within the 3 min before the first sweep read),
 * except a long tail of 3 % who come back to the text between 15 min and 12 h later.
 */
export function dayModel(starts: number, seed: number): ModelAttempt[] {
  const random = seeded(seed);
  const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const verifyDelay = () =>
    random() < 0.03 ? 15 * MINUTE_MS * Math.exp(random() * Math.log(48)) : 60_000 * Math.exp(normal());
  const model: ModelAttempt[] = [];
  for (let i = 0; i < starts; i++) {
    const startAt = Math.floor(random() * DAY_MS);
    const draw = random();
    let cls: OutcomeClass = 'abandons';
    let cumulative = 0;
    for (const c of OUTCOME_CLASSES) {
      cumulative += SHARES[c];
      if (draw < cumulative) {
        cls = c;
        break;
      }
    }
    const verifiedAfter = Math.round(verifyDelay());
    if (cls === 'lands')
      model.push({
        cls,
        startAt,
        outcomeAfterMs: verifiedAfter,
        landsAfterMs: verifiedAfter + 2000 + Math.round(random() * 18_000),
      });
    else if (cls === 'verifiedNeverReturns') model.push({ cls, startAt, outcomeAfterMs: verifiedAfter });
    else if (cls === 'fails')
      model.push({ cls, startAt, outcomeAfterMs: Math.round(90_000 * Math.exp(0.8 * normal())) });
    else model.push({ cls, startAt });
  }
  return model;
}

const quantile = (sorted: number[], q: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

export function classFigures(
  model: ModelAttempt[],
  reads: number[],
  delaysMs: (number | undefined)[],
): Record<OutcomeClass, ClassFigures> {
  const out = {} as Record<OutcomeClass, ClassFigures>;
  for (const cls of OUTCOME_CLASSES) {
    const members = model.flatMap((m, i) => (m.cls === cls ? [i] : []));
    const total = members.reduce((sum, i) => sum + reads[i]!, 0);
    const figures: ClassFigures = {
      attempts: members.length,
      readsPerAttempt: round2(total / Math.max(1, members.length)),
    };
    if (cls === 'verifiedNeverReturns') {
      const delays = members
        .flatMap((i) => (delaysMs[i] === undefined ? [] : [delaysMs[i]! / 1000]))
        .sort((a, b) => a - b);
      figures.delayMedianS = round1(quantile(delays, 0.5));
      figures.delayP95S = round1(quantile(delays, 0.95));
      figures.delayMaxS = round1(delays.at(-1) ?? 0);
    }
    out[cls] = figures;
  }
  return out;
}

export const peakOf = (perMinute: Map<number, number>, starts: number) => {
  const peak = Math.max(0, ...perMinute.values()) / 60;
  return {
    peakReadsPerSecond: round2(peak),
    peakReadsPerSecondAt100k: round1((peak * SCALED_STARTS_PER_DAY) / starts),
  };
};

/** The naive integration over the same traffic: every minute, one read of every attempt still pending in its store. */
export function naiveFigures(model: ModelAttempt[]): ScheduleFigures {
  const reads: number[] = [];
  const delays: (number | undefined)[] = [];
  const perMinute = new Map<number, number>();
  for (const m of model) {
    let count = 0;
    let delay: number | undefined;
    for (let tick = Math.floor(m.startAt / MINUTE_MS) + 1; tick * MINUTE_MS < m.startAt + SWEEP_WINDOW_MS; tick++) {
      const age = tick * MINUTE_MS - m.startAt;
      if (m.landsAfterMs !== undefined && age >= m.landsAfterMs) break;
      count++;
      perMinute.set(tick, (perMinute.get(tick) ?? 0) + 1);
      if (m.outcomeAfterMs !== undefined && age >= m.outcomeAfterMs) {
        if (m.cls === 'verifiedNeverReturns') delay = age - m.outcomeAfterMs;
        break;
      }
    }
    reads.push(count);
    delays.push(delay);
  }
  return {
    classes: classFigures(model, reads, delays),
    ...peakOf(perMinute, model.length),
    readsOutsideWindow: 0,
    wronglyFulfilled: 0,
    rateLimited: 0,
    runsStopped: 0,
  };
}
