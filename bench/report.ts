/** The bench's output: the table on stdout and the same figures as JSON in bench/results/latest.json (or BENCH_OUTPUT). */
import { cpus, loadavg } from 'node:os';
import { BASELINE_BUDGETS, config, PHASES } from './config.ts';
import { pad } from './measure.ts';
import { dayLines } from './phases/day-lines.ts';
import { pumpingSections } from './phases/pumping-lines.ts';
import { numberLibraryLine } from './phases/start-entered.ts';
import type { DuplicateFigures } from './phases/duplicates.ts';
import type { BenchResults } from './phases/run-all.ts';
import { comparisonTable } from './report-comparison-table.ts';
import { rateLimitedLines } from './report-rate-limited-lines.ts';
import { pgSweepLines, sweepLines } from './report-sweep-lines.ts';
import type { Target } from './targets.ts';

export { writeResults } from './report-results-file.ts';

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
