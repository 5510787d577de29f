/**
 * A small closed-loop load generator on an undici Pool: `concurrency` workers, each sending its
 * next request as soon as the previous answer's body has been read. Every run is bounded both in
 * count (`total`) and in time (`maxMs`) and stops by itself. Latency is measured per request from
 * just before `pool.request` until the body has been fully read.
 */
import { performance } from 'node:perf_hooks';
import { Pool, type Dispatcher } from 'undici';

export interface LoadRequest {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface LoadOptions {
  pool: Dispatcher;
  concurrency: number;
  /** At most this many requests (index 0..total-1 is passed to `request`). */
  total: number;
  /** Stop starting requests after this long (in-flight ones finish). */
  maxMs: number;
  request: (index: number, worker: number) => LoadRequest;
  /** HTTP status that counts as a success. */
  expectStatus: number;
  /** Read the body as text and hand it here (e.g. to check the answer); default: discard it. */
  onBody?: (index: number, status: number, body: string) => void;
}

export interface LoadResult {
  /** Requests answered with `expectStatus`. */
  ok: number;
  /** Requests answered with another status, or failed on the network. */
  errors: number;
  /** Status code -> count (network errors under 0). */
  statuses: Record<string, number>;
  elapsedMs: number;
  /** Latencies in ms of every answered request (successes and wrong statuses). */
  latenciesMs: number[];
  /** True when the time bound, not the count, ended the run. */
  timedOut: boolean;
}

export async function closedLoop(options: LoadOptions): Promise<LoadResult> {
  const { pool, concurrency, total, maxMs, request, expectStatus, onBody } = options;
  const latenciesMs: number[] = [];
  const statuses: Record<string, number> = {};
  let next = 0;
  let ok = 0;
  let errors = 0;
  let timedOut = false;
  const startedAt = performance.now();
  const deadline = startedAt + maxMs;

  const worker = async (id: number): Promise<void> => {
    for (;;) {
      if (next >= total) return;
      if (performance.now() >= deadline) {
        timedOut = true;
        return;
      }
      const index = next++;
      const { method, path, headers, body } = request(index, id);
      const t0 = performance.now();
      try {
        const response = await pool.request({ method, path, headers, body });
        if (onBody) onBody(index, response.statusCode, await response.body.text());
        else await response.body.dump({ limit: Number.MAX_SAFE_INTEGER });
        latenciesMs.push(performance.now() - t0);
        statuses[response.statusCode] = (statuses[response.statusCode] ?? 0) + 1;
        if (response.statusCode === expectStatus) ok++;
        else errors++;
      } catch {
        statuses['0'] = (statuses['0'] ?? 0) + 1;
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, id) => worker(id)));
  return { ok, errors, statuses, elapsedMs: performance.now() - startedAt, latenciesMs, timedOut };
}

/** A keep-alive pool with exactly `connections` sockets, no pipelining. */
export function loadPool(origin: string, connections: number): Pool {
  return new Pool(origin, { connections, pipelining: 1, keepAliveTimeout: 60_000, keepAliveMaxTimeout: 60_000 });
}

/** Nearest-rank percentile of an ascending-sorted array. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

export function sortedCopy(values: readonly number[]): number[] {
  return [...values].sort((a, b) => a - b);
}

export function median(values: readonly number[]): number {
  return percentile(sortedCopy(values), 50);
}

/** Merges the statuses of several runs. */
export function mergeStatuses(runs: readonly LoadResult[]): Record<string, number> {
  const merged: Record<string, number> = {};
  for (const run of runs) for (const [code, n] of Object.entries(run.statuses)) merged[code] = (merged[code] ?? 0) + n;
  return merged;
}
