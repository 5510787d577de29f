/**
 * A fresh process per measurement, so its peak RSS belongs to that measurement alone:
 *  - `sweep`: opens the seeded SQLite file with the kit's store, builds the kit's client and runs ONE
 *    `runSweep` over every due attempt (time budget raised so the run is not cut short);
 *  - `raw`: the emulator's raw capacity for GET /session/{id}: a plain keep-alive undici Pool at a
 *    fixed concurrency reading (and parsing) the status of the same seeded sessions.
 */
import { performance } from 'node:perf_hooks';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { createVerifyClient } from '../../middleware/index.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import { DEFAULT_SWEEP_CONCURRENCY } from '../../middleware/sweep/sweep-options.ts';
import { yieldToRequests } from '../../middleware/sweep/cpu-priority.ts';
import { ACTION, basicAuthorization } from '../common.ts';
import { closedLoop, loadPool, percentile, sortedCopy } from '../load.ts';
import { peakRssKiB, serve } from '../ipc.ts';
import type { RawArgs, RawResult, SweepArgs, SweepChildResult } from './sweep-child-types.ts';
import { sampleMemory, traceSweep } from './sweep-instruments.ts';
import { postgresTarget, sqliteTarget } from './sweep-targets.ts';
import { untilQuiet } from './until-quiet.ts';

export type { MemorySample, RawArgs, RawResult, SweepArgs, SweepChildResult } from './sweep-child-types.ts';

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
