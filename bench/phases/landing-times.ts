/**
 * Where the landings' slow tail spent its time, from the kit's spans in the landing app: the status
 * read, the fulfilment (the store's transaction and its commit) or elsewhere (the app, waiting for a
 * store connection or the event loop); and how often a fulfilment stalled, as a commit does when the
 * disk under the database stalls, whatever else is running.
 */
import type { LandingTime } from '../children/app/landing-spans.ts';
import { percentile, sortedCopy } from '../load.ts';
import { round1, round3 } from '../measure.ts';

/** A fulfilment this long waited on something beyond the landings' own work. */
export const STALLED_FULFIL_MS = 100;
/** Stalled fulfilments that ended this close together waited on the same stall. */
const SAME_STALL_MS = 1000;

/** The landings at or above the p99 (server side), and their time by part, as shares of it. */
export interface LandingTail {
  landings: number;
  statusReadShare: number;
  fulfilShare: number;
  elsewhereShare: number;
}

/** Fulfilments that took STALLED_FULFIL_MS or more, counted once per stall. */
export interface FulfilStalls {
  stalls: number;
  perMinute: number;
  longestMs: number;
}

export function tailOf(times: LandingTime[]): LandingTail {
  const p99 = percentile(sortedCopy(times.map((t) => t.totalMs)), 99);
  const tail = times.filter((t) => t.totalMs >= p99);
  const sum = (f: (t: LandingTime) => number) => tail.reduce((n, t) => n + f(t), 0);
  const total = Math.max(
    sum((t) => t.totalMs),
    Number.MIN_VALUE,
  );
  const statusReadShare = sum((t) => t.statusReadMs) / total;
  const fulfilShare = sum((t) => t.fulfilMs) / total;
  return {
    landings: tail.length,
    statusReadShare: round3(statusReadShare),
    fulfilShare: round3(fulfilShare),
    elsewhereShare: round3(Math.max(0, 1 - statusReadShare - fulfilShare)),
  };
}

/** The stalls among `times`, over `windowMs` of landings. */
export function stallsOf(times: LandingTime[], windowMs: number): FulfilStalls {
  const stalled = times
    .filter((t) => t.fulfilMs >= STALLED_FULFIL_MS)
    .map((t) => ({ endedAt: t.startedAt + t.totalMs, fulfilMs: t.fulfilMs }))
    .sort((a, b) => a.endedAt - b.endedAt);
  let stalls = 0;
  let lastEnd = -Infinity;
  for (const { endedAt } of stalled) {
    if (endedAt - lastEnd >= SAME_STALL_MS) stalls++;
    lastEnd = endedAt;
  }
  return {
    stalls,
    perMinute: round1((stalls * 60_000) / Math.max(1, windowMs)),
    longestMs: Math.round(Math.max(0, ...stalled.map((s) => s.fulfilMs))),
  };
}
