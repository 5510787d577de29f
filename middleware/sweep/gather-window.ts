/**
 * How long the sweep's fulfilments gather before they commit together. Nothing waits on one
 * fulfilment's commit, while each commit costs about the same however many it carries (on
 * PostgreSQL a group pays four round trips of its own: BEGIN, the intent locks, the mark, COMMIT),
 * so the sweep waits long enough for its reads in flight to fill a group, trading latency no user
 * sees for fewer commits. A full group of `batchSize` commits at once: at 25 ms a sweep on
 * PostgreSQL committed groups of 29 on average, at 60 ms of 49. Figures: docs/performance.md.
 *
 * Paced to the service's limit, a process reads a group's worth far more slowly (at 125 reads a
 * second, 50 take 400 ms), so it gathers for as long as `batchSize` reads take at its own rate of
 * the last second, up to a second (and a tenth of the lease): a paced sweep commits about as few
 * groups per read as an unpaced one, and the database behind the landings sees fewer commits.
 */

/** The window of an unpaced sweep, and the shortest of a paced one. */
export const GROUP_GATHER_MS = 60;
/** The longest window of a paced sweep. */
export const PACED_GATHER_MAX_MS = 1000;
/** Nor more than this share of the claims' lease: a fulfilment gathering keeps its claim waiting. */
const LEASE_SHARE = 0.1;

/** The gathering window for a process reading at `pacedReadsPerSecond` (null: not paced). */
export function gatherWindowMs(pacedReadsPerSecond: number | null, batchSize: number, leaseMs: number): number {
  if (pacedReadsPerSecond === null || pacedReadsPerSecond <= 0) return GROUP_GATHER_MS;
  const fillMs = (1000 * batchSize) / pacedReadsPerSecond;
  const longest = Math.max(GROUP_GATHER_MS, Math.min(PACED_GATHER_MAX_MS, leaseMs * LEASE_SHARE));
  return Math.min(longest, Math.max(GROUP_GATHER_MS, Math.round(fillMs)));
}
