/** The rate-limited phase's figures: what each round measured, and the phase's over its rounds. */
import type { FloorResult } from '../children/pg-sweep-floor-child.ts';
import type { SweepChildResult } from '../children/sweep-child.ts';
import { config } from '../config.ts';
import { round1, round3, spreadOf, type Spread } from '../measure.ts';
import { pooledStreams, type LandingStream, type Streamed } from './landing-stream.ts';
import { stallsOf, tailOf, type FulfilStalls, type LandingTail } from './landing-times.ts';

/** One round: the landings alone, then while the sweeps worked through the round's attempts. */
export interface RateLimitedRound {
  alone: LandingStream;
  withSweep: LandingStream;
  p99Ratio: number;
  /** The same with the hand-written floor reading at the kit's rate of the round. */
  floor: { alone: LandingStream; withFloor: LandingStream; p99Ratio: number; readsPerSecond: number };
}

/**
 * The hand-written floor beside the landings (information beside the p99 target): what any sweep
 * making the kit's reads at its rate, and a write per attempt, costs the landings on this machine.
 */
export interface FloorFigures {
  /** The rounds' p99 ratios (beside the floor / alone). */
  p99RatioSpread: Spread;
  pooledP99Ratio: number;
  /** The reads a second the floor was given (the kit's, all rounds together). */
  readsPerSecond: number;
  fulfilled: number;
  /** Reads the floor met a 429 on (not read again), and reads that were not verified as stored. */
  limited: number;
  errors: number;
  cpuMsPerRead: number;
}

export interface RateLimitedFigures {
  limitPerSecond: number;
  attempts: number;
  processes: number;
  landingsPerSecond: number;
  /** The landings with no sweep running, and while the sweeps ran: every round's pooled. */
  alone: LandingStream;
  withSweep: LandingStream;
  rounds: RateLimitedRound[];
  /** The rounds' p99 ratios (with the sweeps / alone); the target is on their median. */
  p99RatioSpread: Spread;
  /** The sweeps' wall time, every round's together. */
  sweepWallMs: number;
  /** Sweep runs, and the pauses between them (ms). */
  runs: number;
  pauseMs: number;
  /** The limit the sweeps' shared pace had learned after each run (null: none learned). */
  learnedLimits: (number | null)[];
  fulfilledByProcess: number[];
  sweepRate: number;
  /** Status reads the landings made a second while the sweeps ran (all reads minus the sweeps'). */
  landingReadsPerSecond: number;
  /** 0.85 x (R minus the landings' reads). */
  targetRate: number;
  /** Every status read of the client while the sweeps ran, and those answered 429. */
  reads: number;
  limited: number;
  limitedShare: number;
  /** Reads the sweeps met a 429 on, per process (each read again after the pause). */
  rateLimitedByProcess: number[];
  grants: number;
  distinctGrants: number;
  /** The landings' grants (each landing that answered 303 fulfilled its attempt), and how many distinct. */
  landingGrants: number;
  landingDistinctGrants: number;
  /** The pooled landings' p99 with the sweeps / alone (information; the target is on the rounds' median). */
  pooledP99Ratio: number;
  /** The sweep processes' CPU (user + system) per status read they made, ms. */
  sweepCpuMsPerRead: number;
  /** Writes of the sweeps' shared pace row per 100 status reads of the sweeps. */
  paceWritesPer100Reads: number;
  floor: FloorFigures;
  /** The slowest 1 % of landings (server side) on each side, and their time by part. */
  tail: { alone: LandingTail; withSweep: LandingTail };
  /** Fulfilments that stalled (a commit waiting 100 ms or more), on each side. */
  fulfilStalls: { alone: FulfilStalls; withSweep: FulfilStalls };
}

/** What one round measured. */
export interface RoundResult {
  alone: Streamed;
  withSweep: Streamed;
  /** Every run's reports, run after run, one per process in the same order. */
  results: SweepChildResult[];
  /** The runs' own time, pauses left out (the sweep rate is over it). */
  sweepMs: number;
  /** The sweeps' wall time, their pauses between runs included. */
  wallMs: number;
  learnedLimits: (number | null)[];
  /** Status reads of the client while the sweeps ran, and those answered 429. */
  reads: number;
  limited: number;
  floor: FloorRoundResult;
}

/** What the floor's part of a round measured. */
export interface FloorRoundResult {
  /** The landings alone just before and just after the floor ran. */
  alone: Streamed;
  withFloor: Streamed;
  /** The reads a second the floor was given: the kit's sweeps' in the round. */
  readsPerSecond: number;
  results: FloorResult[];
}

/** The grants of the sweeps' attempts and of the landings', each with how many are distinct. */
export interface Grants {
  sweeps: { n: number; d: number };
  landings: { n: number; d: number };
}

/** The phase's figures over its rounds: the p99 ratio per round, the rest of the rounds together. */
export function figuresOf(
  each: RoundResult[],
  processes: number,
  grants: Grants,
  paceWrites: number,
): RateLimitedFigures {
  const sum = (f: (r: RoundResult) => number) => each.reduce((n, r) => n + f(r), 0);
  const results = each.flatMap((r) => r.results);
  const ofResults = (f: (r: SweepChildResult) => number) => results.reduce((n, r) => n + f(r), 0);
  // One count per sweep process, summed over the runs (each run's reports are in process order).
  const byProcess = (f: (r: SweepChildResult) => number) =>
    Array.from({ length: processes }, (_, p) =>
      results.filter((_, i) => i % processes === p).reduce((n, r) => n + f(r), 0),
    );
  const reads = sum((r) => r.reads);
  const sweepReads = ofResults((r) => r.report.reads);
  const limited = sum((r) => r.limited);
  const wallMs = sum((r) => r.wallMs);
  // The landings read through the pauses too.
  const landingReadsPerSecond = Math.max(0, reads - ofResults((r) => r.report.reads)) / (wallMs / 1000);
  const rounds = each.map(roundOf);
  const aloneStreams = pooledStreams(each.map((r) => r.alone));
  const withSweepStreams = pooledStreams(each.map((r) => r.withSweep));
  const alone = aloneStreams.stream;
  const withSweep = withSweepStreams.stream;
  const learnedLimits = each.flatMap((r) => r.learnedLimits);
  return {
    ...{ limitPerSecond: config.rateLimit, attempts: config.rateLimitedSize, processes },
    ...{ landingsPerSecond: config.rateLimitedLandings, alone, withSweep, rounds },
    p99RatioSpread: spreadOf(rounds.map((r) => r.p99Ratio)),
    sweepWallMs: Math.round(wallMs),
    runs: learnedLimits.length,
    pauseMs: config.rateLimitedRuns > 1 ? config.rateLimitedPauseMs : 0,
    learnedLimits,
    fulfilledByProcess: byProcess((r) => r.report.fulfilled),
    sweepRate: round1(ofResults((r) => r.report.fulfilled) / (sum((r) => r.sweepMs) / 1000)),
    landingReadsPerSecond: round1(landingReadsPerSecond),
    targetRate: round1(0.85 * (config.rateLimit - landingReadsPerSecond)),
    ...{ reads, limited, limitedShare: reads === 0 ? 0 : limited / reads },
    rateLimitedByProcess: byProcess((r) => r.report.rateLimited),
    ...{ grants: grants.sweeps.n, distinctGrants: grants.sweeps.d },
    ...{ landingGrants: grants.landings.n, landingDistinctGrants: grants.landings.d },
    pooledP99Ratio: round3(withSweep.p99 / alone.p99),
    sweepCpuMsPerRead: round3(ofResults((r) => r.cpuUserMs + r.cpuSystemMs) / Math.max(1, sweepReads)),
    paceWritesPer100Reads: round1((100 * paceWrites) / Math.max(1, sweepReads)),
    floor: floorFigures(each, rounds),
    tail: { alone: tailOf(aloneStreams.times), withSweep: tailOf(withSweepStreams.times) },
    fulfilStalls: {
      alone: stallsOf(aloneStreams.times, aloneStreams.windowMs),
      withSweep: stallsOf(withSweepStreams.times, withSweepStreams.windowMs),
    },
  };
}

function floorFigures(each: RoundResult[], rounds: RateLimitedRound[]): FloorFigures {
  const results = each.flatMap((r) => r.floor.results);
  const ofResults = (f: (r: FloorResult) => number) => results.reduce((n, r) => n + f(r), 0);
  const alone = pooledStreams(each.map((r) => r.floor.alone)).stream;
  const withFloor = pooledStreams(each.map((r) => r.floor.withFloor)).stream;
  const reads = ofResults((r) => r.fulfilled + r.limited + r.errors);
  return {
    p99RatioSpread: spreadOf(rounds.map((r) => r.floor.p99Ratio)),
    pooledP99Ratio: round3(withFloor.p99 / alone.p99),
    readsPerSecond: round1(each.reduce((n, r) => n + r.floor.readsPerSecond, 0) / Math.max(1, each.length)),
    fulfilled: ofResults((r) => r.fulfilled),
    limited: ofResults((r) => r.limited),
    errors: ofResults((r) => r.errors),
    cpuMsPerRead: round3(ofResults((r) => r.cpuMs) / Math.max(1, reads)),
  };
}

/** One round's p99 ratios, the kit's and the floor's. */
function roundOf(r: RoundResult): RateLimitedRound {
  return {
    alone: r.alone.stream,
    withSweep: r.withSweep.stream,
    p99Ratio: round3(r.withSweep.stream.p99 / r.alone.stream.p99),
    floor: {
      alone: r.floor.alone.stream,
      withFloor: r.floor.withFloor.stream,
      p99Ratio: round3(r.floor.withFloor.stream.p99 / r.floor.alone.stream.p99),
      readsPerSecond: round1(r.floor.readsPerSecond),
    },
  };
}
