/** The report's section on the sweep and the landings within the service's rate limit. */
import { DEFAULT_SWEEP_NICE } from '../middleware/sweep/sweep-job-args.ts';
import { config } from './config.ts';
import { showSpread } from './measure.ts';
import { STALLED_FULFIL_MS, type FulfilStalls, type LandingTail } from './phases/landing-times.ts';
import type { RateLimitedFigures } from './phases/rate-limited-figures.ts';

const percent = (share: number) => `${Math.round(share * 100)}%`;
const tail = (t: LandingTail) =>
  `${t.landings} landings, time in the status read ${percent(t.statusReadShare)}, in the fulfilment ` +
  `${percent(t.fulfilShare)}, elsewhere ${percent(t.elsewhereShare)}`;
const stalls = (s: FulfilStalls) =>
  `${s.stalls} (${s.perMinute} a minute${s.stalls > 0 ? `, longest ${s.longestMs} ms` : ''})`;

export function rateLimitedLines(r: RateLimitedFigures): string[] {
  const stream = (s: RateLimitedFigures['alone']) =>
    `${s.landings} landings, p50 ${s.p50} ms, p99 ${s.p99} ms, statuses ${JSON.stringify(s.statuses)}`;
  return [
    `Rate-limited: the emulator answers 429 beyond ${r.limitPerSecond} status reads/s for the kit's client; ` +
      `${r.processes} sweep processes (PostgreSQL, the sweep job's CPU priority: nice ${DEFAULT_SWEEP_NICE}) work through ${r.attempts} due attempts while ` +
      `${r.landingsPerSecond} landings/s run on a kit app (same client, same database); in ${r.rounds.length} rounds, ` +
      `each the landings alone for ${config.rateLimitedAloneMs / 2000} s, beside the sweeps over a share of the attempts, and alone for ${config.rateLimitedAloneMs / 2000} s again (after ${config.rateLimitedWarmUpMs / 1000} s of landings not measured)`,
    `  landings alone  ${stream(r.alone)} (${r.rounds.length} rounds pooled)`,
    `  with the sweeps ${stream(r.withSweep)}; p99 with/alone pooled ${r.pooledP99Ratio}`,
    `  p99 with/alone per round: ${r.rounds.map((round) => `${round.p99Ratio} (${round.withSweep.p99} / ${round.alone.p99} ms)`).join(', ')}: ${showSpread(r.p99RatioSpread)}`,
    `  sweep ${r.sweepRate} attempts/s while running; ${(r.sweepWallMs / 1000).toFixed(1)} s in all${r.pauseMs > 0 ? ' (pauses included)' : ''} (fulfilled ${r.fulfilledByProcess.join(' + ')}; ` +
      `grants ${r.grants}, ${r.distinctGrants} distinct); landings' reads ${r.landingReadsPerSecond}/s, so the target ` +
      `0.85 x (${r.limitPerSecond} - ${r.landingReadsPerSecond}) = ${r.targetRate}/s`,
    `  landings' grants ${r.landingGrants}, ${r.landingDistinctGrants} distinct`,
    `  sweep runs ${r.runs} over ${r.rounds.length} rounds${r.pauseMs > 0 ? `, ${r.pauseMs / 1000} s apart within a round` : ''}; the limit the shared pace learned after each: ` +
      r.learnedLimits.map((l) => (l === null ? 'none' : String(l))).join(', '),
    `  reads ${r.reads}, answered 429: ${r.limited} (${(r.limitedShare * 100).toFixed(2)}%; the sweeps met ` +
      `${r.rateLimitedByProcess.join(' + ')} of them)`,
    `  sweep processes' CPU ${r.sweepCpuMsPerRead} ms per read; their shared pace row written ${r.paceWritesPer100Reads} times per 100 reads`,
    `  the hand-written floor in the sweeps' place (same sessions, ${r.floor.readsPerSecond} reads/s, a write per attempt, nice ${DEFAULT_SWEEP_NICE}): ` +
      `landing p99 beside it / alone per round ${r.rounds.map((round) => `${round.floor.p99Ratio} (${round.floor.withFloor.p99} / ${round.floor.alone.p99} ms)`).join(', ')}: ` +
      `${showSpread(r.floor.p99RatioSpread)}; pooled ${r.floor.pooledP99Ratio}; fulfilled ${r.floor.fulfilled}, 429s ${r.floor.limited}, ` +
      `errors ${r.floor.errors}; CPU ${r.floor.cpuMsPerRead} ms per read`,
    `  the slowest 1% of landings (the kit's spans): alone ${tail(r.tail.alone)}; with the sweeps ${tail(r.tail.withSweep)}`,
    `  fulfilments of ${STALLED_FULFIL_MS} ms or more (a commit waiting; those within a second of each other counted once): ` +
      `alone ${stalls(r.fulfilStalls.alone)}; with the sweeps ${stalls(r.fulfilStalls.withSweep)}`,
  ];
}
