/** A kit-against-baseline comparison as the report's table: each side's rate, latencies and CPU, and their ratios. */
import { pad, showSpread } from './measure.ts';
import type { Comparison, SideFigures } from './phases/interleaved.ts';

export function comparisonTable(c: Comparison, title: string): string {
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
