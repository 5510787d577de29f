/** The bench's figures, configuration and targets as JSON in bench/results/latest.json (or BENCH_OUTPUT). */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BASELINE_BUDGETS, config, sweepConcurrency } from './config.ts';
import { log, round2 } from './measure.ts';
import type { BenchResults } from './phases/run-all.ts';
import type { Target } from './targets.ts';

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
