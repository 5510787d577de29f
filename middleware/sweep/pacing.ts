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
 * first learned; processes take read permits from its token bucket a chunk at a time. The row's
 * rules (the cut, the growth, the permits) are pace-rules.ts; this module paces a process by them.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { KitError } from '../errors.ts';
import { boundedRetryAfterMs } from '../client/client-transport.ts';
import type { VerifyStore } from '../store/types.ts';
import { cutPace, HOLD_MS, takePermits, UNPACED, type Permits } from './pace-rules.ts';

export { currentRate, cutPace, takePermits, UNPACED } from './pace-rules.ts';

/** While unpaced, a process looks at the shared row this often. */
const REFRESH_MS = 1000;

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
