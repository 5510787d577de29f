/**
 * One round of the rate-limited phase: the landings alone, beside the kit's sweeps, beside the
 * floor, and alone again, with the emulator's counts of status reads and of those answered 429.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SweepChildResult } from '../children/sweep-child.ts';
import type { SeedAttempt } from '../common.ts';
import { config } from '../config.ts';
import type { Child } from '../ipc.ts';
import type { TestDatabase } from '../postgres.ts';
import { landingStream, pooledStreams } from './landing-stream.ts';
import { learnedLimit } from './rate-limited-counts.ts';
import type { FloorRoundResult, RoundResult } from './rate-limited-figures.ts';
import type { FloorSweepers } from './rate-limited-floor.ts';
import type { Side } from './sides.ts';

interface EmulatorStats {
  statusReads: number;
  statusReadsLimited: number;
}

export async function control<T>(emulatorUrl: string, method: 'GET' | 'POST', path: string, body?: object): Promise<T> {
  const init =
    method === 'GET'
      ? { method }
      : { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body ?? {}) };
  const response = await fetch(`${emulatorUrl}/_control${path}`, init);
  if (!response.ok) throw new Error(`emulator ${method} ${path} answered ${response.status}`);
  return (await response.json()) as T;
}

export type SweepCallArgs = Record<string, unknown> & { timeBudgetMs: number };

interface RoundContext {
  emulatorUrl: string;
  side: Side;
  cookie: string;
  /** The landings' attempts not used yet (each stream takes from the front). */
  landings: SeedAttempt[];
  children: Child[];
  args: SweepCallArgs;
  database: TestDatabase;
  floor: FloorSweepers;
}

/**
 * One round: the landings alone, beside the kit's sweeps until those have worked through what is
 * due, alone again, beside the floor over the same sessions, and alone again; every other round
 * the floor goes first (at the kit's rate of the round before). Each side's ratio is over the two
 * alone windows around it (half the alone time each), so a machine that drifts during the round
 * weighs on both sides of the ratio alike.
 */
export async function oneRound(c: RoundContext, floorFirstAt: number | undefined): Promise<RoundResult> {
  const aloneWindow = () =>
    landingStream(c.side, c.cookie, c.landings, config.rateLimitedLandings, sleep(config.rateLimitedAloneMs / 2));
  const first = await aloneWindow();
  if (floorFirstAt === undefined) {
    const kit = await kitWindow(c);
    const middle = await aloneWindow();
    const floor = await floorWindow(c, kit.readsPerSecond);
    const last = await aloneWindow();
    return { ...kit, alone: pooledStreams([first, middle]), floor: { ...floor, alone: pooledStreams([middle, last]) } };
  }
  const floor = await floorWindow(c, floorFirstAt);
  const middle = await aloneWindow();
  const kit = await kitWindow(c);
  const last = await aloneWindow();
  return { ...kit, alone: pooledStreams([middle, last]), floor: { ...floor, alone: pooledStreams([first, middle]) } };
}

/** The landings beside the kit's sweeps until those have worked through what is due. */
async function kitWindow(c: RoundContext): Promise<Omit<RoundResult, 'alone' | 'floor'> & { readsPerSecond: number }> {
  await sleep(1200); // the emulator's bucket full again
  const before = await control<EmulatorStats>(c.emulatorUrl, 'GET', '/stats');
  const w0 = performance.now();
  const sweeps = sweepRuns(c.children, c.args, c.database);
  const withSweep = await landingStream(c.side, c.cookie, c.landings, config.rateLimitedLandings, sweeps);
  const { results, sweepMs, learnedLimits } = await sweeps;
  const wallMs = performance.now() - w0;
  const after = await control<EmulatorStats>(c.emulatorUrl, 'GET', '/stats');
  const reads = after.statusReads - before.statusReads;
  const limited = after.statusReadsLimited - before.statusReadsLimited;
  // The sweeps' reads a second, their 429s included: the floor's pace.
  const readsPerSecond = results.reduce((n, r) => n + r.report.reads, 0) / (sweepMs / 1000);
  return { withSweep, results, sweepMs, wallMs, learnedLimits, reads, limited, readsPerSecond };
}

/** The landings beside the floor reading the round's sessions at `readsPerSecond`. */
async function floorWindow(c: RoundContext, readsPerSecond: number): Promise<Omit<FloorRoundResult, 'alone'>> {
  await sleep(1200);
  const runs = c.floor.run(readsPerSecond);
  const withFloor = await landingStream(c.side, c.cookie, c.landings, config.rateLimitedLandings, runs);
  return { withFloor, readsPerSecond, results: await runs };
}

/**
 * The sweeps: one run per process until done (one run), or `rateLimitedRuns` runs of
 * `rateLimitedRunMs` with `rateLimitedPauseMs` between them, as a worker on its interval. Each
 * run's reports, the time the runs took (pauses left out) and the limit learned after each.
 */
async function sweepRuns(children: Child[], args: SweepCallArgs, database: TestDatabase) {
  const runs = config.rateLimitedRuns;
  const budget = runs === 1 ? args.timeBudgetMs : config.rateLimitedRunMs;
  const results: SweepChildResult[] = [];
  const learnedLimits: (number | null)[] = [];
  let sweepMs = 0;
  for (let run = 0; run < runs; run++) {
    if (run > 0) await sleep(config.rateLimitedPauseMs);
    const r0 = performance.now();
    const reports = await Promise.all(
      children.map((c) => c.call<SweepChildResult>('sweep', { ...args, timeBudgetMs: budget }, budget + 120_000)),
    );
    sweepMs += performance.now() - r0;
    results.push(...reports);
    learnedLimits.push(await learnedLimit(database));
    if (reports.every((r) => r.report.claimed === 0)) break;
  }
  return { results, sweepMs, learnedLimits };
}
