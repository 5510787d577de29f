/**
 * The shared pace's rules (pacing.ts paces the reads by them): pure functions of the one row every
 * sweep process reads and changes (`updateSweepPace`), at a wall-clock time. The rate is cut on a
 * 429 (multiplicative decrease) and grows back by a step a second of reads actually made (additive
 * increase), aiming a share below where the service last said no; permits come from its token
 * bucket a chunk at a time.
 */
import type { SweepPace } from '../store/types.ts';

/** A 429 cuts the rate to this share of what it was. */
const CUT = 0.8;
/** The share of the last limit the sweep leaves to landings. */
const LANDING_SHARE = 0.1;
/** Growth a second, as a share of the last limit, up to the aim; above it, the probe. */
const GROWTH_PER_SECOND = 0.05;
const PROBE_PER_SECOND = 0.005;
/** Before any limit is known the rate grows by this factor a second (it may start far below). */
const SLOW_START_PER_SECOND = 1.5;
/** 429s within this long of a cut are the same congestion: one cut, the pause extended. */
export const HOLD_MS = 1000;
/** Ten minutes without a 429: reads are not paced again (unless capped). */
const FORGET_MS = 10 * 60_000;
/** Permits saved up at most, and taken per store call, in seconds of the rate. */
const BURST_SECONDS = 0.2;
const CHUNK_SECONDS = 0.05;
const MIN_RATE = 1;
/** Growth one write of the row credits at most: the rate grows with reads made, not with idle time. */
const GROWTH_SECONDS_PER_WRITE = 1;
/** `readsGranted` forgets a grant with this time constant: it counts about the last second's reads. */
const GRANTED_MEMORY_MS = 1000;

export const UNPACED: SweepPace = {
  ratePerSecond: null,
  limitPerSecond: null,
  pausedUntil: 0,
  cutAt: 0,
  tokens: 0,
  tokensAt: 0,
  readsGranted: 0,
};

/** The reads granted lately (about the last second's, all processes together) as of `now`. */
export function readsGrantedAt(pace: SweepPace, now: number): number {
  return pace.readsGranted * Math.exp(-Math.max(0, now - pace.tokensAt) / GRANTED_MEMORY_MS);
}

/**
 * The shared rate at `now`: grown since it was last written (by at most a second's growth), or null
 * when reads are not paced.
 */
export function currentRate(pace: SweepPace, now: number): number | null {
  const rate = pace.ratePerSecond;
  if (rate === null || now - pace.cutAt > FORGET_MS) return null;
  const idle = Math.max(0, now - Math.max(pace.tokensAt, pace.pausedUntil)) / 1000;
  const seconds = Math.min(GROWTH_SECONDS_PER_WRITE, idle);
  const limit = pace.limitPerSecond;
  if (limit === null) return rate * SLOW_START_PER_SECOND ** seconds;
  const aim = limit * (1 - LANDING_SHARE);
  // Seconds of growth left before the aim; the rest of the time only probes.
  const growing = Math.min(seconds, Math.max(0, aim - rate) / (limit * GROWTH_PER_SECOND));
  return rate + limit * (GROWTH_PER_SECOND * growing + PROBE_PER_SECOND * (seconds - growing));
}

/** What a process may do now: `granted` reads (Infinity: unpaced) at `perSecond`, else wait `waitMs`. */
export interface Permits {
  granted: number;
  waitMs: number;
  /** The rate the permits were granted at (Infinity: unpaced). */
  perSecond: number;
}

/** Takes read permits from the shared bucket; `next` is the row to write (undefined: unchanged). */
export function takePermits(
  pace: SweepPace,
  now: number,
  cap: number | undefined,
): Permits & { next: SweepPace | undefined } {
  if (now < pace.pausedUntil) return { granted: 0, waitMs: pace.pausedUntil - now, perSecond: 0, next: undefined };
  const grown = currentRate(pace, now);
  const since = Math.max(pace.tokensAt, pace.pausedUntil);
  const accrue = (perSecond: number) => pace.tokens + (Math.max(0, now - since) / 1000) * perSecond;
  const burst = (perSecond: number) => Math.max(1, perSecond * BURST_SECONDS);
  // A full bucket means the permits went untaken: nobody read at the rate, so it does not grow.
  const kept = pace.ratePerSecond === null || grown === null ? grown : pace.ratePerSecond;
  const unused = kept !== null && accrue(kept) >= burst(kept);
  const rate = unused ? kept : grown;
  const limit = Math.min(rate ?? Infinity, cap ?? Infinity);
  if (limit === Infinity) return { granted: Infinity, waitMs: 0, perSecond: Infinity, next: undefined };
  const tokens = Math.min(burst(limit), accrue(limit));
  // A whole chunk or nothing: every write of the shared row costs a transaction, so a process
  // takes permits a chunk at a time and otherwise waits for one, leaving the row unchanged.
  const chunk = Math.min(Math.max(1, Math.round(limit * CHUNK_SECONDS)), Math.floor(burst(limit)));
  if (tokens < chunk) {
    return { granted: 0, waitMs: Math.ceil(((chunk - tokens) / limit) * 1000), perSecond: limit, next: undefined };
  }
  const readsGranted = readsGrantedAt(pace, now) + chunk;
  return {
    granted: chunk,
    waitMs: 0,
    perSecond: limit,
    next: { ...pace, ratePerSecond: rate, tokens: tokens - chunk, tokensAt: now, readsGranted },
  };
}

/**
 * The service said 429: nobody reads before the Retry-After, and the rate is cut once per
 * congestion. `observedRate` (this process's reads a second) seeds the rate when none was set.
 */
export function cutPace(pace: SweepPace, now: number, retryAfterMs: number, observedRate: number): SweepPace {
  const pausedUntil = Math.max(pace.pausedUntil, now + retryAfterMs);
  if (now - pace.cutAt < HOLD_MS) return { ...pace, pausedUntil, tokens: 0 };
  const rate = currentRate(pace, now);
  // What the service was seen to answer: the reads granted lately, or the limit already learned
  // when fewer were read (the 429 may have met the landings' reads); never more than the rate.
  const answered = Math.max(readsGrantedAt(pace, now), pace.limitPerSecond ?? 0);
  const at = rate === null ? observedRate : Math.min(rate, answered);
  // Less than a read a second seen: nothing to learn a limit or cut a rate from; the pause holds.
  if (at < MIN_RATE) return { ...pace, pausedUntil, tokens: 0 };
  return {
    // Where the service said no; unknown while the first cut started from one process's share.
    limitPerSecond: rate === null ? null : at,
    ratePerSecond: Math.max(MIN_RATE, at * CUT),
    pausedUntil,
    cutAt: now,
    tokens: 0,
    tokensAt: now,
    readsGranted: readsGrantedAt(pace, now),
  };
}
