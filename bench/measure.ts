/** The orchestrator's small measuring helpers: its progress line, rounding, CPU deltas, the spread of ratios. */
import { median, sortedCopy } from './load.ts';

export const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
export const round1 = (n: number) => Math.round(n * 10) / 10;
export const round2 = (n: number) => Math.round(n * 100) / 100;
export const round3 = (n: number) => Math.round(n * 1000) / 1000;

export type Cpu = { user: number; system: number };
export const cpuMs = (a: Cpu, b: Cpu) => (b.user - a.user + (b.system - a.system)) / 1000;

export interface Spread {
  min: number;
  median: number;
  max: number;
}

export function spreadOf(values: number[]): Spread {
  const sorted = sortedCopy(values);
  return { min: sorted[0] ?? Number.NaN, median: round3(median(values)), max: sorted.at(-1) ?? Number.NaN };
}

export const showSpread = (s: Spread) =>
  `median ${s.median.toFixed(3)} (min ${s.min.toFixed(3)}, max ${s.max.toFixed(3)})`;

/** A table row: the first cell left-aligned, the others right-aligned, to the given widths. */
export function pad(cells: (string | number)[], widths: number[]): string {
  return cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]!) : String(c).padStart(widths[i]!))).join('  ');
}
