/**
 * What the sweep measurement's child is asked and answers: a `sweep` run of the kit's sweep or a
 * `raw` read of the emulator's sessions, over the bench's IPC.
 */
import type { SweepReport } from '../../middleware/sweep/sweep-report.ts';

export interface SweepArgs {
  dbPath: string;
  /** PostgreSQL instead of the SQLite file (several sweep processes may share it). */
  databaseUrl?: string;
  emulatorUrl: string;
  clientId: string;
  secret: string;
  /** Undefined = the kit's default. */
  concurrency?: number;
  batchSize?: number;
  timeBudgetMs: number;
  /** The CPU priority the sweep job's process takes (yieldToRequests); undefined keeps the bench's. */
  nice?: number;
}

export interface SweepChildResult {
  report: SweepReport;
  /** runSweep's own wall time, ms (performance.now around the call). */
  runMs: number;
  grants: number;
  peakRssKiB: number;
  rssBeforeKiB: number;
  cpuUserMs: number;
  cpuSystemMs: number;
  /** BENCH_SWEEP_MEMORY=1: process.memoryUsage() (MiB) sampled every 20 ms during runSweep; the sample with the largest RSS. */
  memoryAtPeak?: MemorySample;
}

/** One process.memoryUsage() sample, MiB, with its time since runSweep was called. */
export interface MemorySample {
  atMs: number;
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  /** V8 heap spaces' committed sizes (new_space, old_space, code_space, ...), MiB. */
  spaces: Record<string, number>;
}

export interface RawArgs {
  dbPath: string;
  databaseUrl?: string;
  /** The sessions to read, instead of those of the attempts in the store. */
  sessionIds?: string[];
  emulatorUrl: string;
  clientId: string;
  secret: string;
  concurrency: number;
  total: number;
  maxMs: number;
}

export interface RawResult {
  ok: number;
  errors: number;
  elapsedMs: number;
  rps: number;
  p50: number;
  p99: number;
  /** CPU of this (client) process per request, ms. */
  cpuMsPerRequest: number;
}
