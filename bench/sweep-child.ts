/**
 * A fresh process per measurement, so its peak RSS belongs to that measurement alone:
 *  - `sweep`: opens the seeded SQLite file with the kit's store, builds the kit's client and runs ONE
 *    `runSweep` over every due attempt (time budget raised so the run is not cut short);
 *  - `raw`: the emulator's raw capacity for GET /session/{id}: a plain keep-alive undici Pool at a
 *    fixed concurrency reading (and parsing) the status of the same seeded sessions.
 */
import { performance } from 'node:perf_hooks';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import pg from 'pg';
import {
  createPostgresStore,
  createSqliteStore,
  createVerifyClient,
  type ActionDefinition,
  type VerifyStore,
} from '../middleware/index.ts';
import { runSweep, type SweepReport } from '../middleware/sweep.ts';
import { ACTION, basicAuthorization, PG_INSERT_GRANT, SUCCESS_PATH } from './common.ts';
import { closedLoop, loadPool, percentile, sortedCopy } from './load.ts';
import { peakRssKiB, serve } from './ipc.ts';

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
}

export interface RawArgs {
  dbPath: string;
  databaseUrl?: string;
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

serve({
  async sweep(args: SweepArgs): Promise<SweepChildResult> {
    let store: VerifyStore<unknown>;
    let action: ActionDefinition<unknown>;
    let countGrants: () => Promise<number>;
    let pool: pg.Pool | undefined;
    if (args.databaseUrl !== undefined) {
      pool = new pg.Pool({ connectionString: args.databaseUrl, max: (args.concurrency ?? 4) + 2 });
      const p = pool;
      store = createPostgresStore({ pool: p }) as VerifyStore<unknown>;
      action = {
        name: ACTION,
        operationSensitivity: 'normal',
        successPath: SUCCESS_PATH,
        async fulfil(tx, attempt) {
          const text = PG_INSERT_GRANT;
          const values = [attempt.sessionId, attempt.userRef];
          await (tx as pg.PoolClient).query({ name: 'bench_grant', text, values });
        },
      };
      countGrants = async () => (await p.query('SELECT count(*)::int AS n FROM bench_grants')).rows[0].n as number;
    } else {
      const sqlite = createSqliteStore({ database: args.dbPath });
      const db = sqlite.db;
      store = sqlite as VerifyStore<unknown>;
      const insertGrant = db.prepare('INSERT INTO bench_grants (session_id, user_ref) VALUES (?, ?)');
      const sync: ActionDefinition<Database> = {
        name: ACTION,
        operationSensitivity: 'normal',
        successPath: SUCCESS_PATH,
        fulfil(_tx, attempt) {
          insertGrant.run(attempt.sessionId, attempt.userRef);
        },
      };
      action = sync as ActionDefinition<unknown>;
      countGrants = async () => (db.prepare('SELECT COUNT(*) AS n FROM bench_grants').get() as { n: number }).n;
    }
    const client = createVerifyClient({
      baseUrl: args.emulatorUrl,
      clientId: args.clientId,
      clientSecret: args.secret,
    });
    const rssBeforeKiB = Math.round(process.memoryUsage().rss / 1024);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const report = await runSweep(
      { client, store, actions: new Map([[ACTION, action]]), now: Date.now },
      {
        timeBudgetMs: args.timeBudgetMs,
        ...(args.concurrency === undefined ? {} : { concurrency: args.concurrency }),
        ...(args.batchSize === undefined ? {} : { batchSize: args.batchSize }),
      },
    );
    const runMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
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
    };
  },

  async raw(args: RawArgs): Promise<RawResult> {
    let sessionIds: string[];
    if (args.databaseUrl !== undefined) {
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
