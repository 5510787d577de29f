/** The report's sections on the sweep: on the seeded SQLite file per size, and on PostgreSQL with several processes. */
import { config, sweepConcurrency } from './config.ts';
import { pad, showSpread } from './measure.ts';
import type { PgSweepFigures } from './phases/pg-sweep.ts';
import type { SweepFigures } from './phases/sweep.ts';

export function sweepLines(sweep: SweepFigures[]): string[] {
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

export function pgSweepLines(p: PgSweepFigures): string[] {
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
