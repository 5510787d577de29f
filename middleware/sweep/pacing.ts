/**
 * How fast the sweep reads statuses. Every read costs the integrator and the service limits them
 * (it answers 429 with Retry-After beyond a limit it does not show), so the sweep paces itself:
 *
 * - while the service has not said 429, and no cap is set, reads are not paced at all;
 * - on a 429 every sweep process slows down together: the shared rate is cut (multiplicative
 *   decrease) and nobody reads before the Retry-After has passed; then the rate grows again by a
 *   fixed step a second (additive increase);
 * - the rate aims a share below where the service last said 429, leaving that share to the
 *   landings, whose user is waiting; above the aim it only creeps, to find capacity landings free;
 *   a landing that meets a 429 cuts the sweep's rate as well;
 * - the rate grows only while its permits are taken: a write credits at most a second of growth,
 *   and none when the bucket was full (nobody read at the rate), so a pause between runs leaves it
 *   where it was; the limit a 429 records is at most the reads granted in about the last second,
 *   never a rate nobody read at;
 * - `maxReadsPerSecond` caps all sweep processes together.
 *
 * The pace is one row in the store (`updateSweepPace`), so a second process starts from what the
 * first learned; processes take read permits from its token bucket a chunk at a time.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { KitError } from '../errors.ts';
import { boundedRetryAfterMs } from '../client/client-transport.ts';
import type { SweepPace, VerifyStore } from '../store/types.ts';

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
const HOLD_MS = 1000;
/** Ten minutes without a 429: reads are not paced again (unless capped). */
const FORGET_MS = 10 * 60_000;
/** Permits saved up at most, and taken per store call, in seconds of the rate. */
const BURST_SECONDS = 0.2;
const CHUNK_SECONDS = 0.05;
/** While unpaced, a process looks at the shared row this often. */
const REFRESH_MS = 1000;
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

/**
 * How long every sweep process pauses after a 429: its Retry-After, an hour at most. A ready
 * client (the app's code) may name any wait, and the pause is shared and never shortened.
 */
function pauseAfter(error: KitError): number {
  return boundedRetryAfterMs((error.retryAfterSeconds ?? 1) * 1000);
}

/** What pacing needs of the store; a store without `updateSweepPace` paces each process alone. */
type PaceStore = Pick<VerifyStore<unknown>, 'updateSweepPace'>;

function paceUpdater(store: PaceStore): NonNullable<PaceStore['updateSweepPace']> {
  if (store.updateSweepPace !== undefined) return store.updateSweepPace.bind(store);
  let local = UNPACED;
  return async (change) => {
    local = change(local) ?? local;
    return local;
  };
}

export interface Pacer {
  /** Waits for a read permit; false when `signal` stopped the run, or the wait would pass `deadline`. */
  acquire(): Promise<boolean>;
  /** A permit when one is free at once (unpaced, not stopped); false: ask `acquire`, which may wait. */
  takeNow(): boolean;
  /** The service answered a read 429. */
  limited(error: KitError): Promise<void>;
  /** This process's reads in the last second, paced or not. */
  readsPerSecond(): number;
}

export interface PacerOptions {
  store: PaceStore;
  /** `maxReadsPerSecond`: all sweep processes together. */
  cap?: number;
  signal?: AbortSignal;
  /** The run's end (its time budget), on `now`'s clock: no wait goes past it. */
  deadline?: number;
  /** Wall-clock ms shared by every process (not the kit's `now`, which tests move). */
  now?: () => number;
  /** Waits `ms` on `now`'s clock (tests pass one that moves their clock instead of sleeping). */
  wait?: (ms: number, signal?: AbortSignal) => Promise<unknown>;
}

const sleepFor = (ms: number, signal?: AbortSignal) => sleep(ms, undefined, { signal }).catch(() => undefined);

/** This process's reads of the last second (older ones are dropped as reads come: a run's memory stays flat). */
function recentReads() {
  // A queue from `head` on: shift() moves every element once the array outgrows a small object
  // (a second of an unpaced sweep's reads), a cost per read that grows with the rate.
  let times: number[] = [];
  let head = 0;
  const dropBefore = (t: number) => {
    while (head < times.length && (times[head] ?? 0) <= t - 1000) head++;
    if (head > 1024 && head * 2 > times.length) {
      times = times.slice(head);
      head = 0;
    }
  };
  return {
    add(t: number) {
      dropBefore(t);
      times.push(t);
    },
    lastSecond(t: number): number {
      dropBefore(t);
      return times.length - head;
    },
  };
}

/**
 * Paced permits are spread at the rate they were granted at, never spent in a burst: reads in
 * flight at once queue the landings' reads (their user is waiting) behind the sweep's.
 */
function readSpacer() {
  let spacingMs = 0;
  let nextSlot = 0;
  return {
    rate(perSecond: number) {
      if (Number.isFinite(perSecond) && perSecond > 0) spacingMs = 1000 / perSecond;
    },
    /** When the next read may start, `t` or later. */
    slot(t: number): number {
      const slot = Math.max(t, nextSlot);
      nextSlot = slot + spacingMs;
      return slot;
    },
  };
}

/** One run's pacer: permits taken from the shared row a few at a time. */
export function createPacer(options: PacerOptions): Pacer {
  const { cap, signal, deadline = Infinity, now = Date.now, wait = sleepFor } = options;
  const update = paceUpdater(options.store);
  const recent = recentReads();
  let permits = 0;
  let unpacedUntil = 0;
  let refilling: Promise<boolean> | undefined;
  const spacer = readSpacer();

  const stopped = () => signal?.aborted === true;
  const counted = (t: number): true => {
    recent.add(t);
    return true;
  };
  const refill = async (): Promise<number> => {
    let taken: Permits = { granted: 0, waitMs: 0, perSecond: 0 };
    await update((pace) => {
      const { next, ...permitsNow } = takePermits(pace, now(), cap);
      taken = permitsNow;
      return next;
    });
    if (taken.granted === Infinity) unpacedUntil = now() + REFRESH_MS;
    else permits += taken.granted;
    if (taken.granted > 0) spacer.rate(taken.perSecond);
    return taken.waitMs;
  };
  // False when the wait the row names would pass the run's deadline.
  const refillOrWait = async (): Promise<boolean> => {
    const waitMs = await refill();
    if (waitMs <= 0) return true;
    if (now() + waitMs > deadline) return false;
    await wait(Math.max(5, waitMs), signal);
    return true;
  };

  return {
    async acquire() {
      for (;;) {
        if (stopped()) return false;
        if (permits > 0) {
          permits--;
          const t = now();
          const slot = spacer.slot(t);
          if (slot > deadline) return false;
          if (slot > t) await wait(slot - t, signal);
          if (stopped()) return false;
          return counted(now());
        }
        if (now() < unpacedUntil) return counted(now());
        // One ask of the shared row per process at a time, its wait included: the run's workers
        // share the answer instead of each asking again when the wait ends.
        refilling ??= refillOrWait().finally(() => (refilling = undefined));
        if (!(await refilling)) return false;
      }
    },
    takeNow: () => !stopped() && permits === 0 && now() < unpacedUntil && counted(now()),
    async limited(error) {
      const retryAfterMs = pauseAfter(error);
      permits = 0;
      unpacedUntil = 0;
      await update((pace) => cutPace(pace, now(), retryAfterMs, recent.lastSecond(now())));
    },
    readsPerSecond: () => recent.lastSecond(now()),
  };
}

/** When a landing of this process last slowed the sweep, per store. */
const landingCuts = new WeakMap<PaceStore, number>();

/**
 * A landing met a 429: its user is waiting, the sweep's reads are not, so the sweep slows down
 * (never failing the landing: a store error here is only logged).
 */
export async function slowTheSweep(
  context: { store: PaceStore; logger: { warn(fields: object, message: string): void } },
  error: KitError,
): Promise<void> {
  const retryAfterMs = pauseAfter(error);
  // Many landings meet one congestion: one write a second per process is enough to say so.
  const now = Date.now();
  if (now - (landingCuts.get(context.store) ?? 0) < HOLD_MS) return;
  landingCuts.set(context.store, now);
  try {
    await paceUpdater(context.store)((pace) => cutPace(pace, Date.now(), retryAfterMs, 0));
  } catch {
    context.logger.warn({}, 'could not slow the sweep down after a 429');
  }
}
