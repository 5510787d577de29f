/**
 * How long the sweep's fulfilments gather before they commit together. Nothing waits on one
 * fulfilment's commit, while each commit costs about the same however many it carries (on
 * PostgreSQL a group pays three round trips of its own: BEGIN, the mark with its intent locks,
 * COMMIT, and a WAL flush), so the sweep waits long enough for its reads in flight to fill a group, trading
 * latency no user sees for fewer commits. A full group of `batchSize` commits at once.
 *
 * The window is as long as `batchSize` reads take at the process's own rate of the last second,
 * paced or not, between 60 ms and a second (and a tenth of the lease). Paced to the service's
 * limit (at 125 reads a second, 50 take 400 ms), or slowed by a busy machine, a process still
 * commits about one group per batch of reads: a fixed window of 60 ms committed PostgreSQL groups
 * of 49 on a quiet machine but of 24 on a loaded one, twice the commits per attempt. Figures:
 * docs/performance.md.
 */

/** The shortest window (a process reading faster fills a group sooner; it commits when full). */
export const GROUP_GATHER_MS = 60;
/** The longest window. */
export const GATHER_MAX_MS = 1000;
/** Nor more than this share of the claims' lease: a fulfilment gathering keeps its claim waiting. */
const LEASE_SHARE = 0.1;

/** The gathering window for a process that read `readsPerSecond` in the last second (0: none yet). */
export function gatherWindowMs(readsPerSecond: number, batchSize: number, leaseMs: number): number {
  if (readsPerSecond <= 0) return GROUP_GATHER_MS;
  const fillMs = (1000 * batchSize) / readsPerSecond;
  const longest = Math.max(GROUP_GATHER_MS, Math.min(GATHER_MAX_MS, leaseMs * LEASE_SHARE));
  return Math.min(longest, Math.max(GROUP_GATHER_MS, Math.round(fillMs)));
}
