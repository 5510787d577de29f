/** The store contract's part for the sweep: its claims, its reschedules and its shared pace (store/types.ts). */
import type { Platform } from '../types.ts';

export interface ClaimOptions {
  now: number;
  /** Only attempts created after `now - maxAgeMs` are claimed. */
  maxAgeMs: number;
  limit: number;
  /** The claim expires after this long, so a crashed worker's rows come back. */
  leaseMs: number;
  /** Identifies the claiming worker (process + random suffix). */
  owner: string;
  /**
   * Only attempts started on this platform: when a web kit and a mobile kit (two clients) share a
   * store, each sweep claims only the sessions its own client can read. Default: all.
   */
  platform?: Platform;
}

/** When the sweep reads a still-pending attempt again. */
export interface NextCheck {
  sessionId: string;
  nextCheckAt: number;
}

/**
 * The sweep's shared pace (sweep/pacing.ts): one row that every sweep process reads and changes,
 * so a slow-down one process learned from a 429 holds for all. Times are wall-clock ms.
 */
export interface SweepPace {
  /** Status reads a second all sweep processes together may make; null while not paced. */
  ratePerSecond: number | null;
  /** The rate when the service last answered 429 (null while not known). */
  limitPerSecond: number | null;
  /** No sweep read before this (the service's Retry-After). */
  pausedUntil: number;
  /** When the rate was last cut. */
  cutAt: number;
  /** Read permits saved up in the shared bucket, as of `tokensAt`. */
  tokens: number;
  tokensAt: number;
  /**
   * Read permits granted to all processes together, each weighed down by e^(-age in s), as of
   * `tokensAt`: about the reads made in the last second, what a 429 says the service answered.
   */
  readsGranted: number;
}
