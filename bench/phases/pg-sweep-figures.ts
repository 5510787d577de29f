/**
 * The figures of the sweep on PostgreSQL: each run's throughput and CPU per fulfilled attempt, and
 * the kit over the floor on the median of the rounds, against the emulator's raw capacity.
 */
import type { RawResult } from '../children/sweep-child.ts';
import { config } from '../config.ts';
import { sortedCopy } from '../load.ts';
import { round1, round3, spreadOf, type Spread } from '../measure.ts';

/** Throughput and CPU per fulfilled attempt of one multi-process sweep on PostgreSQL. */
export interface PgSweepRun {
  /** From the moment every process was asked to sweep until the last one finished, ms. */
  wallMs: number;
  fulfilledByProcess: number[];
  attemptsPerSecond: number;
  fractionOfRaw: number;
  grants: number;
  distinctGrants: number;
  peakRssMiB: number[];
  /** CPU ms per fulfilled attempt: the sweep processes (summed), the emulator, and the server's backends. */
  sweepCpuMsPerAttempt: number;
  emulatorCpuMsPerAttempt: number;
  postgresCpuMsPerAttempt: number;
}

export interface PgSweepFigures extends PgSweepRun {
  attempts: number;
  processes: number;
  seedMs: number;
  /** Raw GET /session capacity at the processes' combined concurrency, before and after. */
  rawConcurrency: number;
  rawBefore: number;
  rawAfter: number;
  rawCapacity: number;
  /**
   * The same attempts swept by hand with the least work per attempt (bench/children/pg-sweep-floor-child.ts):
   * a read and one statement, no claim. What this machine allows any sweep on PostgreSQL.
   */
  floor: PgSweepRun;
  /** The kit's rate over the floor's: the median of the rounds (the target), and their spread. */
  kitOverFloor: number;
  kitOverFloorSpread: Spread;
  /**
   * Kit over floor CPU ms per fulfilled attempt (the sweep processes' own, plus the PostgreSQL
   * backends' of the database read from /proc/<pid>/stat), every round's: the target is on the median.
   */
  kitOverFloorCpu: Spread;
  /** Every round, kit and floor, wrote one grant per attempt. */
  everyRoundOnce: boolean;
  floorGrants: 'batched' | 'each';
  /** Each round's rates, fractions of raw capacity (information) and CPU ms per attempt (sweep processes + PostgreSQL). */
  perRound: {
    kitRate: number;
    floorRate: number;
    kitOverFloor: number;
    kitFractionOfRaw: number;
    floorFractionOfRaw: number;
    kitCpuMsPerAttempt: number;
    floorCpuMsPerAttempt: number;
  }[];
}

export type TimedRun = Omit<PgSweepRun, 'fractionOfRaw'>;
export interface Round {
  kit: TimedRun;
  floor: TimedRun;
}

const cpuPerAttempt = (r: TimedRun) => round3(r.sweepCpuMsPerAttempt + r.postgresCpuMsPerAttempt);

export function pgSweepFigures(m: {
  size: number;
  seedMs: number;
  rawConcurrency: number;
  before: RawResult;
  after: RawResult;
  rounds: Round[];
}): PgSweepFigures {
  const ratios = m.rounds.map((r) => round3(r.kit.attemptsPerSecond / r.floor.attemptsPerSecond));
  const spread = spreadOf(ratios);
  // The kit and floor shown in full are the median round's.
  const { kit, floor } = m.rounds[ratios.indexOf(sortedCopy(ratios)[Math.ceil(ratios.length / 2) - 1]!)]!;
  const everyOnce = m.rounds.every(
    (r) => r.kit.grants === m.size && r.kit.distinctGrants === m.size && r.floor.distinctGrants === m.size,
  );
  const rawCapacity = (m.before.rps + m.after.rps) / 2;
  const withFraction = (r: TimedRun): PgSweepRun => ({
    ...r,
    fractionOfRaw: round3(r.attemptsPerSecond / rawCapacity),
  });
  return {
    ...withFraction(kit),
    attempts: m.size,
    processes: config.pgSweepProcesses,
    seedMs: Math.round(m.seedMs),
    rawConcurrency: m.rawConcurrency,
    rawBefore: round1(m.before.rps),
    rawAfter: round1(m.after.rps),
    rawCapacity: round1(rawCapacity),
    floor: withFraction(floor),
    kitOverFloor: spread.median,
    kitOverFloorSpread: spread,
    kitOverFloorCpu: spreadOf(m.rounds.map((r) => round3(cpuPerAttempt(r.kit) / cpuPerAttempt(r.floor)))),
    everyRoundOnce: everyOnce,
    floorGrants: config.pgFloorGrants,
    perRound: m.rounds.map((r, i) => ({
      kitRate: r.kit.attemptsPerSecond,
      floorRate: r.floor.attemptsPerSecond,
      kitOverFloor: ratios[i]!,
      kitFractionOfRaw: round3(r.kit.attemptsPerSecond / rawCapacity),
      floorFractionOfRaw: round3(r.floor.attemptsPerSecond / rawCapacity),
      kitCpuMsPerAttempt: cpuPerAttempt(r.kit),
      floorCpuMsPerAttempt: cpuPerAttempt(r.floor),
    })),
  };
}
