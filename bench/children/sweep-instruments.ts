/**
 * What a sweep measurement may record besides its figures: the process's memory at its peak
 * (BENCH_SWEEP_MEMORY=1) and a timeline of the run's store calls and reads (BENCH_SWEEP_TIMELINE=1).
 */
import { performance } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import type { VerifyClient, VerifyStore } from '../../middleware/index.ts';
import type { MemorySample } from './sweep-child-types.ts';

/** Samples process.memoryUsage() every 20 ms; stop() returns the sample with the largest RSS. */
export function sampleMemory(t0: number) {
  const mib = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10;
  let peak: MemorySample | undefined;
  const sample = () => {
    const m = process.memoryUsage();
    if (peak !== undefined && mib(m.rss) <= peak.rss) return;
    peak = {
      atMs: Math.round(performance.now() - t0),
      rss: mib(m.rss),
      heapTotal: mib(m.heapTotal),
      heapUsed: mib(m.heapUsed),
      external: mib(m.external),
      arrayBuffers: mib(m.arrayBuffers),
      spaces: Object.fromEntries(getHeapSpaceStatistics().map((space) => [space.space_name, mib(space.space_size)])),
    };
  };
  const timer = setInterval(sample, 20);
  return {
    stop(): MemorySample | undefined {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
}

/**
 * BENCH_SWEEP_TIMELINE=1: when each step of the run happened (ms since runSweep was called), written
 * to stderr: the store calls before the first read and after the last, and reads per 250 ms, so
 * the fixed cost of a short run shows where it goes.
 */
export function traceSweep(store: VerifyStore<unknown>, client: VerifyClient) {
  const events: { at: number; what: string; ms: number }[] = [];
  const reads: number[] = [];
  /** Process CPU (ms) at every 1000th read, to show the warm-up. */
  const cpuAt: number[] = [];
  const cpuStart = process.cpuUsage();
  const timed = <T extends object>(target: T, record: (at: number, name: string, ms: number) => void): T =>
    new Proxy(target, {
      get(obj, key, receiver) {
        const value: unknown = Reflect.get(obj, key, receiver);
        if (typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          const at = performance.now();
          try {
            return await (value as (...a: unknown[]) => unknown).apply(obj, args);
          } finally {
            record(at, String(key), performance.now() - at);
          }
        };
      },
    });
  return {
    store: timed(store, (at, what, ms) => events.push({ at, what, ms })),
    client: timed(client, (at, what, ms) => {
      if (what !== 'getSession') return void events.push({ at, what, ms });
      if (reads.push(at + ms) % 1000 === 0) {
        const c = process.cpuUsage(cpuStart);
        cpuAt.push((c.user + c.system) / 1000);
      }
    }),
    print(t0: number) {
      const rel = (t: number) => (t - t0).toFixed(1);
      const firstRead = Math.min(...reads);
      const lastRead = Math.max(...reads);
      const counts = new Map<string, { n: number; ms: number }>();
      for (const e of events) {
        const c = counts.get(e.what) ?? { n: 0, ms: 0 };
        counts.set(e.what, { n: c.n + 1, ms: c.ms + e.ms });
      }
      const lines = [
        `[timeline] first read done at ${rel(firstRead)} ms, last at ${rel(lastRead)} ms, ${reads.length} reads`,
        ...events
          .filter((e) => e.at < firstRead || e.at + e.ms > lastRead || e.what !== 'fulfilBatch')
          .filter((e) => e.at < firstRead + 50 || e.at + e.ms > lastRead - 50)
          .map((e) => `[timeline]   ${e.what} at ${rel(e.at)} took ${e.ms.toFixed(1)} ms`),
        `[timeline] store calls: ${[...counts].map(([k, c]) => `${k} ${c.n}x ${c.ms.toFixed(0)} ms`).join(', ')}`,
      ];
      const perBucket: number[] = [];
      for (const r of reads) perBucket[Math.floor((r - t0) / 250)] = (perBucket[Math.floor((r - t0) / 250)] ?? 0) + 1;
      lines.push(`[timeline] reads per 250 ms: ${Array.from(perBucket, (n) => n ?? 0).join(' ')}`);
      lines.push(
        `[timeline] CPU ms per 1000 reads: ${cpuAt.map((c, i) => (c - (cpuAt[i - 1] ?? 0)).toFixed(0)).join(' ')}`,
      );
      process.stderr.write(lines.join('\n') + '\n');
    },
  };
}
