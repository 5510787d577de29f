/**
 * The sweep's own path in one process, without HTTP (measurement tool, not part of `npm run bench`):
 * seeds N due attempts in a fresh SQLite file and runs ONE runSweep whose client answers every read
 * "verified" on the next turn of the event loop. Prints the run's CPU per attempt, and between the
 * lines `MARK start` and `MARK end` whatever the process prints meanwhile, so with --trace-gc-nvp
 * the garbage collections of the run alone can be read (bytes allocated, survived, promoted):
 *
 *   MICRO_N=20000 node --import tsx --trace-gc-nvp bench/micro/sweep-micro.ts
 *
 * MICRO_BATCH sets the run's batchSize (default: the kit's).
 */
import type { Database } from 'better-sqlite3';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { type ActionDefinition, type SessionStatus, type VerifyClient } from '../../middleware/index.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import { ACTION, dueAttempt, newState, SUCCESS_PATH } from '../common.ts';

const n = Number(process.env.MICRO_N ?? 20_000);
const dir = mkdtempSync(join(tmpdir(), 'sweep-micro-'));
try {
  const store = createSqliteStore({ database: join(dir, 'micro.sqlite') });
  store.db.exec('CREATE TABLE bench_grants (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, user_ref TEXT NOT NULL)');
  const sessions = new Map<string, { state: string; userRef: string }>();
  const now = Date.now();
  store.db.exec('BEGIN');
  for (let i = 0; i < n; i++) {
    const s = { state: newState(), sessionId: `ses_${i.toString(36).padStart(8, '0')}`, userRef: `micro-${i}` };
    sessions.set(s.sessionId, s);
    void store.insertAttempt(dueAttempt(s, now));
  }
  store.db.exec('COMMIT');
  const insertGrant = store.db.prepare('INSERT INTO bench_grants (session_id, user_ref) VALUES (?, ?)');
  const action: ActionDefinition<Database> = {
    name: ACTION,
    operationSensitivity: 'normal',
    successPath: SUCCESS_PATH,
    fulfil(_tx, attempt) {
      insertGrant.run(attempt.sessionId, attempt.userRef);
    },
  };
  const client: VerifyClient = {
    createSession: () => Promise.reject(new Error('not used')),
    async getSession(sessionId): Promise<SessionStatus> {
      await new Promise((resolve) => setImmediate(resolve));
      const s = sessions.get(sessionId);
      return s === undefined ? { status: 'pending' } : { status: 'verified', state: s.state, userRef: s.userRef };
    },
    close: async () => {},
  };
  // MICRO_PROF=<file>: a sampling heap profile of the objects the run allocated that outlived a
  // scavenge (promoted to the old generation, or still live at the end), by allocation site.
  const profiler = process.env.MICRO_PROF ? await startSurvivorProfile() : undefined;
  process.stdout.write('MARK start\n');
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const report = await runSweep(
    { client, store, actions: new Map([[ACTION, action as ActionDefinition<unknown>]]), now: Date.now },
    { timeBudgetMs: 600_000, ...(process.env.MICRO_BATCH ? { batchSize: Number(process.env.MICRO_BATCH) } : {}) },
  );
  const runMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  process.stdout.write('MARK end\n');
  if (profiler !== undefined && process.env.MICRO_PROF) writeFileSync(process.env.MICRO_PROF, await profiler.stop());
  const grants = (store.db.prepare('SELECT COUNT(*) AS n FROM bench_grants').get() as { n: number }).n;
  await store.close();
  const cpuMs = (cpu.user + cpu.system) / 1000;
  process.stdout.write(
    `${JSON.stringify({ n, fulfilled: report.fulfilled, grants, runMs: Math.round(runMs), cpuUsPerAttempt: Math.round((cpuMs * 1000) / n) })}\n`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/** Starts V8's sampling heap profiler keeping only samples no scavenge collected; stop() returns the profile as JSON. */
async function startSurvivorProfile(): Promise<{ stop(): Promise<string> }> {
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) =>
      session.post(method, params as never, (error: Error | null, result: unknown) =>
        error ? reject(error) : resolve(result),
      ),
    );
  await post('HeapProfiler.startSampling', {
    samplingInterval: 512,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: false,
  });
  return {
    async stop() {
      const { profile } = (await post('HeapProfiler.stopSampling')) as { profile: unknown };
      session.disconnect();
      return JSON.stringify(profile);
    },
  };
}
