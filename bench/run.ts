/**
 * `npm run bench`: what the kit costs over a hand-written integration, and how the sweep scales
 * (against its targets). Loopback only, against the emulator with no artificial latency. Prints a table and
 * writes the same figures to bench/results/latest.json. See docs/performance.md.
 *
 * Processes: this orchestrator (load generator), the emulator, the kit app and the baseline app
 * each run in their own process; each sweep and each raw-capacity measurement runs in a fresh one.
 * Kit and baseline are measured in alternating short rounds (ABBA order) and their samples pooled,
 * so drift on a shared machine hits both alike; the figures that matter are the ratios.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { configLine } from './config.ts';
import type { Child } from './ipc.ts';
import { log, round1 } from './measure.ts';
import { runPhases, type BenchResults } from './phases/run-all.ts';
import { reportLines, writeResults } from './report.ts';
import { targetsOf } from './targets.ts';

async function main(): Promise<void> {
  const startedAt = performance.now();
  const dir = mkdtempSync(join(tmpdir(), 'verify-kit-bench-'));
  const children: Child[] = [];
  log(configLine());
  let results: BenchResults;
  try {
    results = await runPhases(dir, children);
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
  const targets = targetsOf(results);
  const runSeconds = round1((performance.now() - startedAt) / 1000);
  process.stdout.write(`${reportLines(results, targets, runSeconds).join('\n')}\n`);
  writeResults(results, targets, runSeconds);
}

main().catch((error: unknown) => {
  process.stderr.write(`[bench] failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
