/**
 * A fresh process per measurement, so its peak RSS belongs to that measurement alone:
 *  - `sweep`: opens the seeded SQLite file with the kit's store, builds the kit's client and runs ONE
 *    `runSweep` over every due attempt (time budget raised so the run is not cut short);
 *  - `raw`: the emulator's raw capacity for GET /session/{id}: a plain keep-alive undici Pool at a
 *    fixed concurrency reading (and parsing) the status of the same seeded sessions.
 */
import { performance } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import pg from 'pg';
import {
  createVerifyClient,
  type ActionDefinition,
  type VerifyClient,
  type VerifyStore,
} from '../../middleware/index.ts';
import { createPostgresStore } from '../../middleware/store/postgres/postgres.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import { DEFAULT_SWEEP_CONCURRENCY } from '../../middleware/sweep/sweep-options.ts';
import { yieldToRequests } from '../../middleware/sweep/cpu-priority.ts';
import type { SweepReport } from '../../middleware/sweep/sweep-report.ts';
import { ACTION, basicAuthorization, PG_INSERT_GRANT, SUCCESS_PATH } from '../common.ts';
import { closedLoop, loadPool, percentile, sortedCopy } from '../load.ts';
import { peakRssKiB, serve } from '../ipc.ts';
import { untilQuiet } from './until-quiet.ts';

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

/** The store the sweep runs on, its action (one grant per attempt) and how to count the grants afterwards. */
interface SweepTarget {
  store: VerifyStore<unknown>;
  action: ActionDefinition<unknown>;
  countGrants: () => Promise<number>;
  pool: pg.Pool | undefined;
}

/** The kit's PostgreSQL store on its own pool (the sweep's concurrency plus 2). */
function postgresTarget(args: SweepArgs & { databaseUrl: string }): SweepTarget {
  const p = new pg.Pool({ connectionString: args.databaseUrl, max: (args.concurrency ?? 4) + 2 });
  const store = createPostgresStore({ pool: p }) as VerifyStore<unknown>;
  const action: ActionDefinition<unknown> = {
    name: ACTION,
    operationSensitivity: 'normal',
    successPath: SUCCESS_PATH,
    async fulfil(tx, attempt) {
      const text = PG_INSERT_GRANT;
      const values = [attempt.sessionId, attempt.userRef];
      await (tx as pg.PoolClient).query({ name: 'bench_grant', text, values });
    },
  };
  const countGrants = async () => (await p.query('SELECT count(*)::int AS n FROM bench_grants')).rows[0].n as number;
  return { store, action, countGrants, pool: p };
}

/** The kit's SQLite store on the seeded file; the action runs synchronously inside its transaction. */
function sqliteTarget(args: SweepArgs): SweepTarget {
  const sqlite = createSqliteStore({ database: args.dbPath });
  const db = sqlite.db;
  const insertGrant = db.prepare('INSERT INTO bench_grants (session_id, user_ref) VALUES (?, ?)');
  const sync: ActionDefinition<Database> = {
    name: ACTION,
    operationSensitivity: 'normal',
    successPath: SUCCESS_PATH,
    fulfil(_tx, attempt) {
      insertGrant.run(attempt.sessionId, attempt.userRef);
    },
  };
  const countGrants = async () => (db.prepare('SELECT COUNT(*) AS n FROM bench_grants').get() as { n: number }).n;
  return {
    store: sqlite as VerifyStore<unknown>,
    action: sync as ActionDefinition<unknown>,
    countGrants,
    pool: undefined,
  };
}

serve({
  async sweep(args: SweepArgs): Promise<SweepChildResult> {
    if (args.nice !== undefined) yieldToRequests(args.nice);
    const target =
      args.databaseUrl !== undefined ? postgresTarget({ ...args, databaseUrl: args.databaseUrl }) : sqliteTarget(args);
    const { action, countGrants, pool } = target;
    // The store's opening (its checkpoint worker booting) is not the run's work per attempt.
    await untilQuiet();
    let store = target.store;
    // As the sweep job builds its kit's client: a connection per status read in flight.
    let client = createVerifyClient({
      baseUrl: args.emulatorUrl,
      clientId: args.clientId,
      clientSecret: args.secret,
      connections: args.concurrency ?? DEFAULT_SWEEP_CONCURRENCY,
    });
    const timeline = process.env.BENCH_SWEEP_TIMELINE ? traceSweep(store, client) : undefined;
    if (timeline !== undefined) ({ store, client } = timeline);
    const rssBeforeKiB = Math.round(process.memoryUsage().rss / 1024);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const memory = process.env.BENCH_SWEEP_MEMORY ? sampleMemory(t0) : undefined;
    const report = await runSweep(
      // The floors count nothing for SMS pumping: neither does the kit here (its apps' choice too).
      { client, store, actions: new Map([[ACTION, action]]), now: Date.now, pumping: { mode: 'off' } },
      {
        timeBudgetMs: args.timeBudgetMs,
        ...(args.concurrency === undefined ? {} : { concurrency: args.concurrency }),
        ...(args.batchSize === undefined ? {} : { batchSize: args.batchSize }),
      },
    );
    const runMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const memoryAtPeak = memory?.stop();
    timeline?.print(t0);
    const grants = await countGrants();
    await client.close();
    await store.close();
    await pool?.end();
    return {
      report,
      runMs,
      grants,
      peakRssKiB: peakRssKiB(),
      rssBeforeKiB,
      cpuUserMs: cpu.user / 1000,
      cpuSystemMs: cpu.system / 1000,
      ...(memoryAtPeak === undefined ? {} : { memoryAtPeak }),
    };
  },

  async raw(args: RawArgs): Promise<RawResult> {
    let sessionIds: string[];
    if (args.sessionIds !== undefined) {
      sessionIds = args.sessionIds;
    } else if (args.databaseUrl !== undefined) {
      const client = new pg.Client({ connectionString: args.databaseUrl });
      await client.connect();
      const { rows } = await client.query<{ session_id: string }>('SELECT session_id FROM verify_kit_attempts');
      sessionIds = rows.map((r) => r.session_id);
      await client.end();
    } else {
      const db = new BetterSqlite3(args.dbPath, { readonly: true });
      sessionIds = db.prepare('SELECT session_id FROM verify_kit_attempts').pluck().all() as string[];
      db.close();
    }
    const ids = sessionIds.map((id) => `/session/${encodeURIComponent(id)}`);
    if (ids.length === 0) throw new Error('no seeded sessions to read');
    const origin = new URL(args.emulatorUrl).origin;
    const pool = loadPool(origin, args.concurrency);
    const headers = { authorization: basicAuthorization(args.clientId, args.secret), accept: 'application/json' };
    let bad = 0;
    const cpu0 = process.cpuUsage();
    const result = await closedLoop({
      pool,
      concurrency: args.concurrency,
      total: args.total,
      maxMs: args.maxMs,
      expectStatus: 200,
      request: (i) => ({ method: 'GET', path: ids[i % ids.length]!, headers }),
      onBody: (_i, _status, body) => {
        // Parse the answer as any client would; count answers that are not a verified status.
        if ((JSON.parse(body) as { status?: string }).status !== 'verified') bad++;
      },
    });
    const cpu = process.cpuUsage(cpu0);
    await pool.close();
    const sorted = sortedCopy(result.latenciesMs);
    return {
      ok: result.ok - bad,
      errors: result.errors + bad,
      elapsedMs: result.elapsedMs,
      rps: (result.ok + result.errors) / (result.elapsedMs / 1000),
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      cpuMsPerRequest: (cpu.user + cpu.system) / 1000 / Math.max(1, result.ok + result.errors),
    };
  },
});

/** Samples process.memoryUsage() every 20 ms; stop() returns the sample with the largest RSS. */
function sampleMemory(t0: number) {
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
function traceSweep(store: VerifyStore<unknown>, client: VerifyClient) {
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
