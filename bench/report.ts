/** The bench's output: the table on stdout and the same figures as JSON in bench/results/latest.json (or BENCH_OUTPUT). */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BASELINE_BUDGETS, config, PHASES, sweepConcurrency } from './config.ts';
import { log, pad, round2, showSpread } from './measure.ts';
import { dayLines } from './phases/day-lines.ts';
import { pumpingSections } from './phases/pumping-lines.ts';
import { numberLibraryLine } from './phases/start-entered.ts';
import type { DuplicateFigures } from './phases/duplicates.ts';
import type { Comparison, SideFigures } from './phases/interleaved.ts';
import type { PgSweepFigures } from './phases/pg-sweep.ts';
import { STALLED_FULFIL_MS, type FulfilStalls, type LandingTail } from './phases/landing-times.ts';
import type { RateLimitedFigures } from './phases/rate-limited-figures.ts';
import { DEFAULT_SWEEP_NICE } from '../middleware/sweep/sweep-job-args.ts';
import type { BenchResults } from './phases/run-all.ts';
import type { SweepFigures } from './phases/sweep.ts';
import type { Target } from './targets.ts';

/** The report's lines: the machine, one section per phase run, then the targets. */
export function reportLines(results: BenchResults, targets: Target[], runSeconds: number): string[] {
  const out: string[] = [''];
  out.push(
    `Verification kit benchmarks — ${new Date().toISOString()} — node ${process.version}, ${cpus().length} CPUs, load average at end ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  out.push(
    'Loopback only; emulator without artificial latency; each of emulator, kit app, baseline app, load generator in its own process.',
  );
  out.push('');
  for (const section of phaseSections(results)) out.push(...section, '');
  out.push(...targetLines(targets));
  out.push('');
  out.push(`npm run bench took ${runSeconds} s.`);
  return out;
}

/** One section (without its trailing blank line) per phase that ran, in the phases' order. */
function phaseSections(results: BenchResults): string[][] {
  const sections: string[][] = [];
  if (results.day) sections.push(dayLines(results.day));
  sections.push(...pumpingSections(results, comparisonTable));
  if (results.landing) {
    sections.push([
      comparisonTable(
        results.landing,
        `Landing: GET /verify/return for a verified, not yet fulfilled attempt (one attempt per request), signed in as its user -> 303; concurrency ${config.concurrency}, ${config.rounds} rounds x ${config.roundRequests} per side, ABBA-interleaved, samples pooled`,
      ),
    ]);
  }
  if (results.start) {
    sections.push([
      comparisonTable(
        results.start,
        `Start: POST /verify/start (CSRF token, one user per connection) -> 200 auto-submit page; concurrency ${config.concurrency}, ${config.rounds} rounds x ${config.roundRequests} per side, ABBA-interleaved, samples pooled; kit start limits ${process.env.BENCH_KIT_START_LIMITS === 'off' ? 'OFF (BENCH_KIT_START_LIMITS=off)' : 'on (its default) with generous budgets: counted, never hit'}; ${BASELINE_BUDGETS}`,
      ),
    ]);
  }
  if (results.startEntered || results.numberLibrary) sections.push(startEnteredLines(results));
  if (results.duplicates) sections.push(duplicatesLines(results.duplicates));
  if (results.rateLimited) sections.push(rateLimitedLines(results.rateLimited));
  if (results.sweep) sections.push(sweepLines(results.sweep));
  if (results.pgLanding) {
    sections.push([
      comparisonTable(
        results.pgLanding,
        "Landing on PostgreSQL: the kit's PostgreSQL store vs a hand-written node-postgres landing (same steps, " +
          `one transaction: conditional mark + INSERT); concurrency ${config.concurrency}, ` +
          `${config.rounds} rounds x ${config.roundRequests} per side, ABBA-interleaved`,
      ),
    ]);
  }
  if (results.pgSweep) sections.push(pgSweepLines(results.pgSweep));
  return sections;
}

function startEnteredLines({ startEntered, numberLibrary }: BenchResults): string[] {
  const title =
    `Start with a typed number: POST /verify/start with a new number in the form's phone field each request (half ` +
    `national UK, half international French mobiles) -> 200 auto-submit page; the baseline parses with libphonenumber-js/max ` +
    `as the kit does; ${BASELINE_BUDGETS}; concurrency ${config.concurrency}, ${config.rounds} rounds x ${config.roundRequests} per side, ABBA-interleaved`;
  return [
    ...(startEntered === undefined ? [title] : [comparisonTable(startEntered, title)]),
    ...(numberLibrary === undefined ? [] : [numberLibraryLine(numberLibrary)]),
  ];
}

function duplicatesLines(duplicates: DuplicateFigures[]): string[] {
  const out = [
    `Duplicates: ${config.duplicates} concurrent landings (${config.duplicates} connections) for ONE verified attempt`,
  ];
  const w = [10, 10, 12, 9, 9, 9];
  out.push(pad(['', 'requests', 'fulfilments', 'p50 ms', 'p99 ms', 'max ms'], w));
  for (const d of duplicates) {
    out.push(
      pad([d.side, d.requests, d.fulfilments, d.p50.toFixed(2), d.p99.toFixed(2), d.max.toFixed(2)], w) +
        `  statuses ${JSON.stringify(d.statuses)}`,
    );
  }
  return out;
}

function sweepLines(sweep: SweepFigures[]): string[] {
  const out = [sweepTable(sweep)];
  for (const s of sweep)
    out.push(
      `  ${s.attempts}: hand-written floor (the same reads, one transaction per 50 marking each attempt and writing its grant; ` +
        `no claim): ${s.floor.attemptsPerSecond} attempts/s, CPU ms per fulfilled attempt kit/floor per run ` +
        `${s.cpuRounds.map((r) => `${r.kitCpuMsPerFulfilled}/${r.floorCpuMsPerFulfilled}`).join(', ')}: ${showSpread(s.kitOverFloorCpu)}`,
    );
  if (config.sweepSizes.join(',') !== '10000,100000')
    out.push(
      `  NOTE: sweep sizes were set by BENCH_SWEEP_SIZES=${config.sweepSizes.join(',')} (the targets are set for 10000,100000).`,
    );
  return out;
}

function pgSweepLines(p: PgSweepFigures): string[] {
  const f = p.floor;
  const out = [
    `Sweep on PostgreSQL: ${p.attempts} due attempts, ${p.processes} sweep processes at once ` +
      `(concurrency ${sweepConcurrency} each, batch 50); raw capacity at c=${p.rawConcurrency} ` +
      `${p.rawCapacity} req/s (before ${p.rawBefore}, after ${p.rawAfter}); seeding ${(p.seedMs / 1000).toFixed(1)} s`,
  ];
  for (const [what, r] of [
    ['kit', p],
    ['floor', f],
  ] as const) {
    out.push(
      `  ${what.padEnd(5)} ${r.attemptsPerSecond} attempts/s in ${(r.wallMs / 1000).toFixed(1)} s ` +
        `(fulfilled ${r.fulfilledByProcess.join(' + ')}); fraction ${r.fractionOfRaw}; ` +
        `grants ${r.grants} (${r.distinctGrants} distinct); peak RSS ${r.peakRssMiB.join(' / ')} MiB; ` +
        `CPU ms per attempt: sweep processes ${r.sweepCpuMsPerAttempt}, emulator ${r.emulatorCpuMsPerAttempt}, ` +
        `PostgreSQL backends ${r.postgresCpuMsPerAttempt}`,
    );
  }
  out.push(
    `  floor = by hand, the least work per attempt (a read, and a share of one statement per 50 that marks them` +
      (config.pgFloorGrants === 'each'
        ? `, then the grants' INSERT per attempt in its transaction (BENCH_PG_FLOOR_GRANTS=each)`
        : ' and writes their grants') +
      `; no claim, each process its own share): kit/floor rate ${showSpread(p.kitOverFloorSpread)} over ` +
      `${p.perRound.length} ABBA rounds (the rows above are the median round's)`,
  );
  p.perRound.forEach((r, i) =>
    out.push(
      `  round ${i + 1}: kit ${r.kitRate}/s, floor ${r.floorRate}/s, kit/floor ${r.kitOverFloor}; ` +
        `CPU ms per attempt (sweep processes + PostgreSQL) kit ${r.kitCpuMsPerAttempt}, floor ${r.floorCpuMsPerAttempt}; ` +
        `fraction of raw capacity (information) kit ${r.kitFractionOfRaw}, floor ${r.floorFractionOfRaw}`,
    ),
  );
  return out;
}

const percent = (share: number) => `${Math.round(share * 100)}%`;
const tail = (t: LandingTail) =>
  `${t.landings} landings, time in the status read ${percent(t.statusReadShare)}, in the fulfilment ` +
  `${percent(t.fulfilShare)}, elsewhere ${percent(t.elsewhereShare)}`;
const stalls = (s: FulfilStalls) =>
  `${s.stalls} (${s.perMinute} a minute${s.stalls > 0 ? `, longest ${s.longestMs} ms` : ''})`;

function rateLimitedLines(r: RateLimitedFigures): string[] {
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

function targetLines(targets: Target[]): string[] {
  const out = ['Targets (pg-*: several instances on PostgreSQL)'];
  for (const t of targets) out.push(`  ${t.met ? 'met   ' : 'MISSED'}  ${t.name}: ${t.value} (target ${t.target})`);
  if (!config.phases.every((p) => PHASES.includes(p)) || config.phases.length < PHASES.length) {
    out.push(`  NOTE: only phases ${config.phases.join(', ')} were run (BENCH_ONLY).`);
  }
  if (process.env.BENCH_BASELINE_KIT_DIR !== undefined) {
    out.push(
      `  NOTE: the "baseline" side is the kit from ${process.env.BENCH_BASELINE_KIT_DIR}/middleware (BENCH_BASELINE_KIT_DIR): ` +
        'an A/B of two kit versions, so the targets above do not apply.',
    );
  }
  return out;
}

/** Writes the figures, the configuration and the targets as JSON; logs where. */
export function writeResults(results: BenchResults, targets: Target[], runSeconds: number): void {
  const resultsDir = fileURLToPath(new URL('./results', import.meta.url));
  mkdirSync(resultsDir, { recursive: true });
  const json = {
    generatedAt: new Date().toISOString(),
    machine: {
      node: process.version,
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model,
      loadAverageAtEnd: loadavg().map(round2),
    },
    config: {
      ...config,
      sweepConcurrencyUsed: sweepConcurrency,
      kitStartLimits: process.env.BENCH_KIT_START_LIMITS === 'off' ? 'off' : 'on, generous budgets',
      baselineStartBudgets: BASELINE_BUDGETS,
    },
    runSeconds,
    ...results,
    targets,
  };
  const file = process.env.BENCH_OUTPUT ?? join(resultsDir, 'latest.json');
  writeFileSync(file, `${JSON.stringify(json, null, 2)}\n`);
  log(`wrote ${file}`);
}

function comparisonTable(c: Comparison, title: string): string {
  const w = [10, 9, 8, 8, 8, 12, 12];
  const row = (name: string, f: SideFigures) =>
    pad(
      [
        name,
        f.rps.toFixed(1),
        f.p50.toFixed(2),
        f.p90.toFixed(2),
        f.p99.toFixed(2),
        f.appCpuMsPerRequest.toFixed(3),
        f.emulatorCpuMsPerRequest.toFixed(3),
      ],
      w,
    );
  return [
    title,
    pad(['', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'app CPU ms', 'emu CPU ms'], w),
    row('kit', c.kit),
    row('baseline', c.baseline),
    pad(
      [
        'kit/base',
        c.ratio.rps.toFixed(3),
        c.ratio.p50.toFixed(3),
        '',
        c.ratio.p99.toFixed(3),
        c.ratio.appCpu.toFixed(3),
        '',
      ],
      w,
    ),
    `  per ABBA round kit/base p50: ${c.perRound.p50.join(' ')}: ${showSpread(c.spread.p50)}`,
    `  per ABBA round kit/base p99: ${c.perRound.p99.join(' ')}: ${showSpread(c.spread.p99)}`,
    `  statuses kit ${JSON.stringify(c.kit.statuses)} baseline ${JSON.stringify(c.baseline.statuses)}`,
  ].join('\n');
}

function sweepTable(rows: SweepFigures[]): string {
  const w = [9, 9, 9, 10, 11, 11, 9, 10, 11, 11];
  return [
    `Sweep: one runSweep over N due attempts (verified sessions) in a fresh child process, ${config.sweepRounds} runs per size from the same seeded file (the rows are each size's median run); concurrency ${sweepConcurrency}${config.sweepConcurrency === undefined ? ' (kit default)' : ''}, batch 50 (default)`,
    pad(
      [
        'attempts',
        'seed s',
        'run s',
        'process s',
        'attempts/s',
        'raw req/s',
        'fraction',
        'peak RSS',
        'CPU ms/att',
        'emu ms/read',
      ],
      w,
    ),
    ...rows.map((s) =>
      pad(
        [
          s.attempts,
          (s.seedMs / 1000).toFixed(1),
          (s.runMs / 1000).toFixed(2),
          (s.processWallMs / 1000).toFixed(2),
          s.attemptsPerSecond.toFixed(1),
          s.rawCapacity.toFixed(1),
          s.fractionOfRaw.toFixed(3),
          `${s.peakRssMiB.toFixed(1)} MiB`,
          s.sweepCpuMsPerAttempt.toFixed(3),
          s.emulatorCpuMsPerRead.toFixed(3),
        ],
        w,
      ),
    ),
    ...rows.map(
      (s) =>
        `  ${s.attempts}: fraction per run ${s.roundFractions.join(', ')}; raw before ${s.rawBefore} / after ${s.rawAfter} req/s; emulator CPU per raw read ${s.emulatorCpuMsPerRawRead} ms; raw client CPU per read ${s.rawClientCpuMsPerRead} ms; report ${JSON.stringify({ ...s.report, owner: undefined })}`,
    ),
  ].join('\n');
}
