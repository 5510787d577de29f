/**
 * Sweep: one runSweep over N due attempts (verified sessions) in a fresh child process, against the
 * emulator's raw capacity measured just before and just after it at the same concurrency. Each size
 * runs BENCH_SWEEP_ROUNDS times on the same seeded file (restored between rounds); the round with
 * the median fraction of raw capacity is the size's figures (a 10 000 run lasts about two seconds,
 * where one hiccup of a shared machine moves the fraction by a tenth).
 *
 * Each round also runs the hand-written floor (bench/children/sqlite-sweep-floor-child.ts) over the
 * same seeded file, kit first in odd rounds and floor first in even ones: the target is the kit's CPU
 * per fulfilled attempt over the floor's, the median of the rounds (the sweep process does all the
 * work a SQLite sweep does, so its CPU is the whole cost beside the emulator's).
 */
import { copyFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { SqliteFloorResult } from '../children/sqlite-sweep-floor-child.ts';
import type { RawResult, SweepChildResult } from '../children/sweep-child.ts';
import { config, sweepConcurrency } from '../config.ts';
import { spawnChild, type Child } from '../ipc.ts';
import { cpuMs, log, round1, round3, spreadOf, type Cpu, type Spread } from '../measure.ts';
import { resetEmulator, seedVerifiedSessions, writeDueAttempts, type SeedClient } from '../seed.ts';

export interface SweepFigures {
  attempts: number;
  seedMs: number;
  /** Fork + runSweep + exit of the sweeping process, ms (tsx start-up included). */
  processWallMs: number;
  /** runSweep alone, ms. */
  runMs: number;
  attemptsPerSecond: number;
  /** Raw GET /session capacity (req/s) measured just before and just after, and their mean. */
  rawBefore: number;
  rawAfter: number;
  rawCapacity: number;
  fractionOfRaw: number;
  peakRssMiB: number;
  rssBeforeRunMiB: number;
  sweepCpuMsPerAttempt: number;
  emulatorCpuMsPerRead: number;
  emulatorCpuMsPerRawRead: number;
  /** CPU of the raw client process per read, ms (compare with sweepCpuMsPerAttempt). */
  rawClientCpuMsPerRead: number;
  report: SweepChildResult['report'];
  grants: number;
  /** Every round's fraction of raw capacity, in the order they ran (this size's figures are the median round's). */
  roundFractions: number[];
  /** The sweep process's CPU (user + system) per fulfilled attempt, ms. */
  kitCpuMsPerFulfilled: number;
  /** The hand-written floor of the same round. */
  floor: SqliteFloorRun;
  /** Every round's kit and floor, in the order they ran. */
  cpuRounds: { kitCpuMsPerFulfilled: number; floorCpuMsPerFulfilled: number; kitOverFloorRate: number }[];
  /** Kit over floor CPU per fulfilled attempt, every round's: the target is on the median. */
  kitOverFloorCpu: Spread;
  /** Every round's floor fulfilled every attempt once. */
  floorEveryRoundOnce: boolean;
}

/** The hand-written floor's run of one round. */
export interface SqliteFloorRun {
  attemptsPerSecond: number;
  cpuMsPerFulfilled: number;
  fulfilled: number;
  grants: number;
  errors: number;
}

/** What every sweep child of one size is told: the seeded file, the emulator and the client. */
interface SweepArgs {
  dbPath: string;
  emulatorUrl: string;
  clientId: string;
  secret: string;
}

type RawRun = RawResult & { emuCpuMs: number };

export async function sweepPhase(
  emulatorUrl: string,
  emulator: Child,
  client: SeedClient,
  dir: string,
): Promise<SweepFigures[]> {
  const out: SweepFigures[] = [];
  for (const size of config.sweepSizes)
    out.push(await sweepSize(emulatorUrl, emulator, client, join(dir, `sweep-${size}.sqlite`), size));
  return out;
}

async function sweepSize(
  emulatorUrl: string,
  emulator: Child,
  client: SeedClient,
  dbPath: string,
  size: number,
): Promise<SweepFigures> {
  await resetEmulator(emulatorUrl);
  const seedMs = await seedDueAttempts(emulatorUrl, client, dbPath, size);
  const common: SweepArgs = { dbPath, emulatorUrl, clientId: client.clientId, secret: client.secret };
  const seeded = `${dbPath}.seeded`;
  copyFileSync(dbPath, seeded);
  const rounds: SweepFigures[] = [];
  const floorRounds: SqliteFloorRun[] = [];
  // Each raw measurement is the "after" of one round and the "before" of the next.
  let before = await rawCapacity(emulator, common, size);
  log(`sweep ${size}: raw capacity ${Math.round(before.rps)} req/s`);
  try {
    for (let round = 1; round <= config.sweepRounds; round++) {
      const floorFirst = round % 2 === 0;
      if (round > 1) restoreSeeded(seeded, dbPath);
      if (floorFirst) floorRounds.push(await floorSweep(common, size, seeded));
      const { result, processWallMs, emuCpuMs } = await sweepInChild(emulator, common);
      log(`sweep ${size} round ${round}: ${result.report.fulfilled} fulfilled in ${Math.round(result.runMs)} ms`);
      if (result.memoryAtPeak !== undefined)
        log(`sweep ${size}: memory at the peak ${JSON.stringify(result.memoryAtPeak)}`);
      const after = await rawCapacity(emulator, common, size);
      log(`sweep ${size}: raw capacity ${Math.round(after.rps)} req/s`);
      if (result.report.stoppedBy !== null)
        log(`sweep ${size}: WARNING the sweep stopped by ${result.report.stoppedBy} before the due work was done`);
      rounds.push(sweepFigures({ size, seedMs, processWallMs, emuCpuMs, result, before, after }));
      if (!floorFirst) floorRounds.push(await floorSweep(common, size, seeded));
      const kit = rounds.at(-1)!;
      const floor = floorRounds.at(-1)!;
      log(
        `sweep ${size} round ${round}: CPU ms per fulfilled attempt kit ${kit.kitCpuMsPerFulfilled}, ` +
          `floor ${floor.cpuMsPerFulfilled}; floor ${floor.fulfilled} fulfilled at ${floor.attemptsPerSecond}/s`,
      );
      before = after;
    }
  } finally {
    for (const path of [dbPath, seeded])
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
  }
  return withFloor(medianRound(rounds), rounds, floorRounds);
}

/**
 * The hand-written floor over the seeded file, in a fresh process (loaded before the timed run).
 * Leaves the seeded file restored for whatever runs next.
 */
async function floorSweep(common: SweepArgs, size: number, seeded: string): Promise<SqliteFloorRun> {
  restoreSeeded(seeded, common.dbPath);
  const child = spawnChild('./children/sqlite-sweep-floor-child.ts', 'floor');
  let r: SqliteFloorResult;
  try {
    await child.call<number>('load', { ...common, concurrency: sweepConcurrency }, 120_000);
    r = await child.call<SqliteFloorResult>('run', undefined, config.sweepBudgetMs + 120_000);
  } finally {
    await child.stop();
  }
  restoreSeeded(seeded, common.dbPath);
  if (r.errors > 0) log(`sweep ${size} floor: WARNING ${r.errors} reads were not verified with the stored state`);
  return {
    attemptsPerSecond: round1(r.fulfilled / (r.runMs / 1000)),
    cpuMsPerFulfilled: round3(r.cpuMs / Math.max(1, r.fulfilled)),
    fulfilled: r.fulfilled,
    grants: r.grants,
    errors: r.errors,
  };
}

/** The median round with its floor, and kit over floor CPU per fulfilled attempt of every round. */
function withFloor(median: SweepFigures, rounds: SweepFigures[], floors: SqliteFloorRun[]): SweepFigures {
  const cpuRounds = rounds.map((kit, i) => ({
    kitCpuMsPerFulfilled: kit.kitCpuMsPerFulfilled,
    floorCpuMsPerFulfilled: floors[i]!.cpuMsPerFulfilled,
    kitOverFloorRate: round3(kit.attemptsPerSecond / floors[i]!.attemptsPerSecond),
  }));
  return {
    ...median,
    floor: floors[rounds.findIndex((r) => r.fractionOfRaw === median.fractionOfRaw)]!,
    cpuRounds,
    kitOverFloorCpu: spreadOf(cpuRounds.map((r) => round3(r.kitCpuMsPerFulfilled / r.floorCpuMsPerFulfilled))),
    floorEveryRoundOnce: floors.every((f) => f.fulfilled === median.attempts && f.grants === median.attempts),
  };
}

/** The seeded file back in place of the swept one (its WAL and shared memory gone with it). */
function restoreSeeded(seeded: string, dbPath: string): void {
  rmSync(`${dbPath}-wal`, { force: true });
  rmSync(`${dbPath}-shm`, { force: true });
  copyFileSync(seeded, dbPath);
}

/** The round with the median fraction of raw capacity, with every round's fraction. */
function medianRound(rounds: SweepFigures[]): SweepFigures {
  const sorted = [...rounds].sort((a, b) => a.fractionOfRaw - b.fractionOfRaw);
  const median = sorted[Math.floor((sorted.length - 1) / 2)]!;
  return { ...median, roundFractions: rounds.map((r) => r.fractionOfRaw) };
}

/** Seeds `size` verified sessions and writes them as due attempts; resolves with the time it took, ms. */
async function seedDueAttempts(emulatorUrl: string, client: SeedClient, dbPath: string, size: number) {
  const t0 = performance.now();
  // One attempt per user: with the default ordering every one of them is the user's newest intent.
  const sessions = await seedVerifiedSessions(emulatorUrl, client, size, (i) => `bench-sweeper-${i}`, {
    concurrency: config.seedConcurrency,
  });
  // The attempts, through the kit's store, all due (first check time in the past), in one transaction.
  await writeDueAttempts(dbPath, sessions);
  const seedMs = performance.now() - t0;
  log(`sweep ${size}: seeded ${size} verified sessions and due attempts in ${Math.round(seedMs)} ms`);
  return seedMs;
}

/** The emulator's raw GET /session capacity, from a fresh process, with the emulator's CPU meanwhile. */
async function rawCapacity(emulator: Child, common: SweepArgs, size: number): Promise<RawRun> {
  const child = spawnChild('./children/sweep-child.ts', 'raw');
  try {
    const e0 = await emulator.call<Cpu>('cpu');
    const result = await child.call<RawResult>('raw', {
      ...common,
      concurrency: sweepConcurrency,
      total: config.rawRequests,
      maxMs: config.rawMaxMs,
    });
    const e1 = await emulator.call<Cpu>('cpu');
    if (result.errors > 0) log(`sweep ${size}: WARNING raw capacity run had ${result.errors} errors`);
    return { ...result, emuCpuMs: cpuMs(e0, e1) };
  } finally {
    await child.stop();
  }
}

/** ONE runSweep in a fresh process, timed from the fork to its exit, with the emulator's CPU meanwhile. */
async function sweepInChild(emulator: Child, common: SweepArgs) {
  const child = spawnChild('./children/sweep-child.ts', 'sweep');
  let result: SweepChildResult;
  const w0 = performance.now();
  const e0 = await emulator.call<Cpu>('cpu');
  try {
    result = await child.call<SweepChildResult>(
      'sweep',
      {
        ...common,
        concurrency: config.sweepConcurrency,
        timeBudgetMs: config.sweepBudgetMs,
      },
      config.sweepBudgetMs + 120_000,
    );
  } finally {
    await child.stop();
  }
  const e1 = await emulator.call<Cpu>('cpu');
  return { result, processWallMs: performance.now() - w0, emuCpuMs: cpuMs(e0, e1) };
}

function sweepFigures(m: {
  size: number;
  seedMs: number;
  processWallMs: number;
  emuCpuMs: number;
  result: SweepChildResult;
  before: RawRun;
  after: RawRun;
}): SweepFigures {
  const { result, before, after } = m;
  const attemptsPerSecond = result.report.fulfilled / (result.runMs / 1000);
  const rawCapacity = (before.rps + after.rps) / 2;
  return {
    attempts: m.size,
    seedMs: Math.round(m.seedMs),
    processWallMs: Math.round(m.processWallMs),
    runMs: Math.round(result.runMs),
    attemptsPerSecond: round1(attemptsPerSecond),
    rawBefore: round1(before.rps),
    rawAfter: round1(after.rps),
    rawCapacity: round1(rawCapacity),
    fractionOfRaw: round3(attemptsPerSecond / rawCapacity),
    peakRssMiB: round1(result.peakRssKiB / 1024),
    rssBeforeRunMiB: round1(result.rssBeforeKiB / 1024),
    sweepCpuMsPerAttempt: round3((result.cpuUserMs + result.cpuSystemMs) / Math.max(1, result.report.reads)),
    emulatorCpuMsPerRead: round3(m.emuCpuMs / Math.max(1, result.report.reads)),
    rawClientCpuMsPerRead: round3((before.cpuMsPerRequest + after.cpuMsPerRequest) / 2),
    emulatorCpuMsPerRawRead: round3(
      (before.emuCpuMs + after.emuCpuMs) / Math.max(1, before.ok + before.errors + after.ok + after.errors),
    ),
    report: result.report,
    grants: result.grants,
    roundFractions: [],
    kitCpuMsPerFulfilled: round3((result.cpuUserMs + result.cpuSystemMs) / Math.max(1, result.report.fulfilled)),
    floor: { attemptsPerSecond: 0, cpuMsPerFulfilled: 0, fulfilled: 0, grants: 0, errors: 0 },
    cpuRounds: [],
    kitOverFloorCpu: spreadOf([]),
    floorEveryRoundOnce: false,
  };
}
