/**
 * The sweep on PostgreSQL: several sweep processes at once over one database, against the
 * emulator's raw capacity at their combined concurrency and against a hand-written floor.
 */
import { performance } from 'node:perf_hooks';
import type { RawResult } from '../children/sweep-child.ts';
import type { SeedAttempt } from '../common.ts';
import { config, sweepConcurrency } from '../config.ts';
import { spawnChild, type Child } from '../ipc.ts';
import { log, round3 } from '../measure.ts';
import { resetEmulator, seedVerifiedSessions, type SeedClient } from '../seed.ts';
import { pgSweepFigures, type PgSweepFigures, type Round } from './pg-sweep-figures.ts';
import { floorPgSweep, kitPgSweep } from './pg-sweep-sides.ts';

export type { PgSweepFigures, PgSweepRun } from './pg-sweep-figures.ts';
export { kitSweepDatabase, seedDueAttempts } from './pg-sweep-sides.ts';

/**
 * The sweep on PostgreSQL: N due attempts (verified sessions) in one database, swept by several
 * sweep processes at once (SKIP LOCKED claims), against the emulator's raw capacity at their
 * combined concurrency, and against the hand-written floor over the same sessions.
 */
export async function pgSweepPhase(emulatorUrl: string, emulator: Child, client: SeedClient): Promise<PgSweepFigures> {
  await resetEmulator(emulatorUrl);
  const size = config.pgSweepSize;
  const t0 = performance.now();
  // One attempt per user: with the default ordering every one of them is the user's newest intent.
  const sessions = await seedVerifiedSessions(emulatorUrl, client, size, (i) => `bench-pg-sweeper-${i}`, {
    concurrency: config.seedConcurrency,
  });
  const seedMs = performance.now() - t0;
  log(`pg-sweep ${size}: seeded ${size} verified sessions in ${Math.round(seedMs)} ms`);
  const common = { dbPath: '', emulatorUrl, clientId: client.clientId, secret: client.secret };
  const rawConcurrency = sweepConcurrency * config.pgSweepProcesses;
  const before = await pgRawCapacity(sessions, common, rawConcurrency);
  log(`pg-sweep ${size}: raw capacity before ${Math.round(before.rps)} req/s at concurrency ${rawConcurrency}`);
  const rounds = await kitAndFloorRounds(sessions, common, emulator);
  const after = await pgRawCapacity(sessions, common, rawConcurrency);
  log(`pg-sweep ${size}: raw capacity after ${Math.round(after.rps)} req/s`);
  return pgSweepFigures({ size, seedMs, rawConcurrency, before, after, rounds });
}

/**
 * `pgSweepRounds` rounds of the kit's sweep and the floor over the same sessions, in ABBA order
 * (kit first in even rounds), each on a fresh database: the target is judged on the median round.
 */
async function kitAndFloorRounds(sessions: SeedAttempt[], common: object, emulator: Child): Promise<Round[]> {
  const rounds: Round[] = [];
  for (let r = 0; r < config.pgSweepRounds; r++) {
    const kitFirst = r % 2 === 0;
    const first = kitFirst
      ? await kitPgSweep(sessions, common, emulator)
      : await floorPgSweep(sessions, common, emulator);
    const second = kitFirst
      ? await floorPgSweep(sessions, common, emulator)
      : await kitPgSweep(sessions, common, emulator);
    const [kit, floor] = kitFirst ? [first, second] : [second, first];
    rounds.push({ kit, floor });
    log(
      `pg-sweep round ${r + 1}/${config.pgSweepRounds}: kit ${kit.attemptsPerSecond}/s (${kit.fulfilledByProcess.join(' + ')}), ` +
        `floor ${floor.attemptsPerSecond}/s, kit/floor ${round3(kit.attemptsPerSecond / floor.attemptsPerSecond)}`,
    );
  }
  return rounds;
}

/** The emulator's raw GET /session capacity over the seeded sessions, from a fresh process. */
async function pgRawCapacity(sessions: SeedAttempt[], common: object, rawConcurrency: number): Promise<RawResult> {
  const child = spawnChild('./children/sweep-child.ts', 'raw');
  try {
    const sessionIds = sessions.map((a) => a.sessionId);
    const args = {
      ...common,
      sessionIds,
      concurrency: rawConcurrency,
      total: config.rawRequests,
      maxMs: config.rawMaxMs,
    };
    return await child.call<RawResult>('raw', args);
  } finally {
    await child.stop();
  }
}
