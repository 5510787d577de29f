/**
 * Kit against baseline on one kind of request: warm-up, then alternating rounds (ABBA) whose samples
 * are pooled per side, with the app's and the emulator's CPU per request and the per-round ratios.
 */
import { config } from '../config.ts';
import type { Child } from '../ipc.ts';
import {
  closedLoop,
  loadPool,
  mergeStatuses,
  percentile,
  sortedCopy,
  type LoadRequest,
  type LoadResult,
} from '../load.ts';
import { cpuMs, log, round1, round2, round3, spreadOf, type Cpu, type Spread } from '../measure.ts';
import type { Side } from './sides.ts';

export interface SideFigures {
  requests: number;
  ok: number;
  errors: number;
  statuses: Record<string, number>;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** CPU time of the app process per request, ms (user + system). */
  appCpuMsPerRequest: number;
  /** CPU time of the emulator process per request, ms. */
  emulatorCpuMsPerRequest: number;
}

export interface Comparison {
  what: string;
  concurrency: number;
  rounds: number;
  roundRequests: number;
  kit: SideFigures;
  baseline: SideFigures;
  ratio: { p50: number; p99: number; rps: number; appCpu: number };
  /** kit/baseline p50 and p99 ratios of each ABBA round pair (their spread shows the noise). */
  perRound: { p50: number[]; p99: number[] };
  /** min, median and max of the per-round ratios: a target is met only when the median meets it. */
  spread: { p50: Spread; p99: Spread };
}

function figures(runs: LoadResult[], appCpuMs: number, emuCpuMs: number): SideFigures {
  const latencies = sortedCopy(runs.flatMap((r) => r.latenciesMs));
  const ok = runs.reduce((n, r) => n + r.ok, 0);
  const errors = runs.reduce((n, r) => n + r.errors, 0);
  const elapsed = runs.reduce((n, r) => n + r.elapsedMs, 0);
  const requests = ok + errors;
  return {
    requests,
    ok,
    errors,
    statuses: mergeStatuses(runs),
    rps: round1(requests / (elapsed / 1000)),
    p50: round2(percentile(latencies, 50)),
    p90: round2(percentile(latencies, 90)),
    p99: round2(percentile(latencies, 99)),
    max: round2(latencies.at(-1) ?? Number.NaN),
    appCpuMsPerRequest: round3(appCpuMs / requests),
    emulatorCpuMsPerRequest: round3(emuCpuMs / requests),
  };
}

/** One side's pool and what its kept rounds measured. */
interface Tally {
  pool: ReturnType<typeof loadPool>;
  /** The index of the side's next request (across rounds, warm-up first). */
  next: number;
  runs: LoadResult[];
  appCpuMs: number;
  emuCpuMs: number;
}

type RequestOf = (side: Side, index: number, worker: number) => LoadRequest;

/**
 * Warm-up (discarded), then `rounds` rounds per side in ABBA order: kit, baseline, baseline, kit, ...
 * `request(side, i)` builds the i-th request of that side (i counts across rounds, warm-up first).
 */
export async function interleaved(
  what: string,
  sides: [Side, Side],
  emulator: Child,
  expectStatus: number,
  request: (side: Side, index: number, worker: number) => LoadRequest,
): Promise<Comparison> {
  const tallies = new Map<string, Tally>(
    sides.map((s) => [
      s.name,
      { pool: loadPool(s.origin, config.concurrency), next: 0, runs: [], appCpuMs: 0, emuCpuMs: 0 },
    ]),
  );
  const runOne = (side: Side, count: number, keep: boolean) =>
    runRound({ what, side, tally: tallies.get(side.name)!, emulator, expectStatus, request }, count, keep);
  try {
    if (config.warmupRequests > 0) for (const side of sides) await runOne(side, config.warmupRequests, false);
    for (let r = 0; r < config.rounds; r++) {
      const order = r % 2 === 0 ? sides : ([sides[1], sides[0]] as const);
      for (const side of order) await runOne(side, config.roundRequests, true);
      log(`${what}: round ${r + 1}/${config.rounds} done`);
    }
  } finally {
    await Promise.all([...tallies.values()].map((t) => t.pool.close()));
  }
  return comparisonOf(what, tallies.get(sides[0].name)!, tallies.get(sides[1].name)!);
}

/** One round of `count` requests on one side; a kept round adds its samples and CPU to the side's tally. */
async function runRound(
  on: { what: string; side: Side; tally: Tally; emulator: Child; expectStatus: number; request: RequestOf },
  count: number,
  keep: boolean,
): Promise<void> {
  const { what, side, tally, emulator } = on;
  const base = tally.next;
  tally.next = base + count;
  const [app0, emu0] = await Promise.all([side.child.call<Cpu>('cpu'), emulator.call<Cpu>('cpu')]);
  const result = await closedLoop({
    pool: tally.pool,
    concurrency: config.concurrency,
    total: count,
    maxMs: config.roundMaxMs,
    expectStatus: on.expectStatus,
    request: (i, worker) => on.request(side, base + i, worker),
  });
  const [app1, emu1] = await Promise.all([side.child.call<Cpu>('cpu'), emulator.call<Cpu>('cpu')]);
  if (result.timedOut)
    log(
      `${what}: a ${side.name} round hit its ${config.roundMaxMs} ms bound after ${result.ok + result.errors} requests`,
    );
  if (!keep) return;
  tally.runs.push(result);
  tally.appCpuMs += cpuMs(app0, app1);
  tally.emuCpuMs += cpuMs(emu0, emu1);
}

/** kit/baseline p50 and p99 of each round pair. */
function perRoundRatios(kitRuns: LoadResult[], baseRuns: LoadResult[]): { p50: number[]; p99: number[] } {
  const perRound = { p50: [] as number[], p99: [] as number[] };
  kitRuns.forEach((k, i) => {
    const b = baseRuns[i]!;
    const ks = sortedCopy(k.latenciesMs);
    const bs = sortedCopy(b.latenciesMs);
    perRound.p50.push(round3(percentile(ks, 50) / percentile(bs, 50)));
    perRound.p99.push(round3(percentile(ks, 99) / percentile(bs, 99)));
  });
  return perRound;
}

function comparisonOf(what: string, kitTally: Tally, baseTally: Tally): Comparison {
  const kit = figures(kitTally.runs, kitTally.appCpuMs, kitTally.emuCpuMs);
  const baseline = figures(baseTally.runs, baseTally.appCpuMs, baseTally.emuCpuMs);
  const perRound = perRoundRatios(kitTally.runs, baseTally.runs);
  return {
    what,
    concurrency: config.concurrency,
    rounds: config.rounds,
    roundRequests: config.roundRequests,
    kit,
    baseline,
    ratio: {
      p50: round3(kit.p50 / baseline.p50),
      p99: round3(kit.p99 / baseline.p99),
      rps: round3(kit.rps / baseline.rps),
      appCpu: round3(kit.appCpuMsPerRequest / baseline.appCpuMsPerRequest),
    },
    perRound,
    spread: { p50: spreadOf(perRound.p50), p99: spreadOf(perRound.p99) },
  };
}
