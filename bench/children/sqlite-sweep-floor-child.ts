/**
 * The least work any sweep on SQLite can do per attempt, written by hand over the same seeded file
 * as the kit's sweep: read the session's status (Basic auth, the answer parsed and checked:
 * verified, and the echoed state and userRef equal the stored ones), and per batch of verified
 * attempts ONE transaction that marks each attempt (a conditional UPDATE) and writes its grant
 * (the kit's action contract: one INSERT per attempt). Same WAL mode and synchronous=NORMAL as
 * the kit's store.
 *
 * No claim: the pending attempts are loaded before the run. It has no lease, no retry, no ordering
 * and no outcome events, so it is not an integration anyone should ship; it is what this machine
 * allows, so the kit's CPU per attempt can be read against the least any sweep spends.
 */
import { performance } from 'node:perf_hooks';
import BetterSqlite3 from 'better-sqlite3';
import { request } from 'undici';
import { basicAuthorization } from '../common.ts';
import { loadPool } from '../load.ts';
import { peakRssKiB, serve } from '../ipc.ts';

export interface SqliteFloorArgs {
  dbPath: string;
  emulatorUrl: string;
  clientId: string;
  secret: string;
  concurrency: number;
}

export interface SqliteFloorResult {
  fulfilled: number;
  /** Reads that did not answer verified with the stored state and userRef (none is expected). */
  errors: number;
  reads: number;
  /** The run's own time, ms. */
  runMs: number;
  cpuMs: number;
  peakRssKiB: number;
  grants: number;
}

interface FloorAttempt {
  state: string;
  session_id: string;
  user_ref: string;
}

/** Verified attempts per transaction (the kit sweep's batch size). */
const BATCH = 50;

const MARK = `UPDATE verify_kit_attempts SET outcome = 'fulfilled', fulfilled_at = ?
  WHERE session_id = ? AND outcome = 'pending'`;
const GRANT = 'INSERT INTO bench_grants (session_id, user_ref) VALUES (?, ?)';

let loaded: { args: SqliteFloorArgs; attempts: FloorAttempt[]; db: BetterSqlite3.Database } | undefined;

serve(
  {
    /** Opens the seeded file and loads its pending attempts before the timed run. */
    load(args: SqliteFloorArgs): number {
      loaded?.db.close();
      const db = new BetterSqlite3(args.dbPath);
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      const attempts = db
        .prepare("SELECT state, session_id, user_ref FROM verify_kit_attempts WHERE outcome = 'pending'")
        .all() as FloorAttempt[];
      loaded = { args, attempts, db };
      return attempts.length;
    },

    async run(): Promise<SqliteFloorResult> {
      if (loaded === undefined) throw new Error('call load first');
      const { args, attempts, db } = loaded;
      const mark = db.prepare(MARK);
      const grant = db.prepare(GRANT);
      let fulfilled = 0;
      const fulfilBatch = db.transaction((batch: FloorAttempt[]) => {
        const now = Date.now();
        for (const a of batch) {
          if (mark.run(now, a.session_id).changes !== 1) continue;
          grant.run(a.session_id, a.user_ref);
          fulfilled++;
        }
      });
      const emulator = loadPool(new URL(args.emulatorUrl).origin, args.concurrency);
      const headers = { authorization: basicAuthorization(args.clientId, args.secret), accept: 'application/json' };
      let next = 0;
      let errors = 0;
      let reads = 0;
      let verified: FloorAttempt[] = [];
      const write = () => {
        const batch = verified;
        verified = [];
        fulfilBatch.immediate(batch);
      };
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      const worker = async () => {
        for (let a = attempts[next++]; a !== undefined; a = attempts[next++]) {
          const answer = await request(`${args.emulatorUrl}/session/${encodeURIComponent(a.session_id)}`, {
            dispatcher: emulator,
            headers,
          });
          reads++;
          const status = (await answer.body.json()) as { status?: string; state?: string; userRef?: string };
          const ok = answer.statusCode === 200 && status.status === 'verified';
          if (!ok || status.state !== a.state || status.userRef !== a.user_ref) {
            errors++;
            continue;
          }
          if (verified.push(a) >= BATCH) write();
        }
      };
      await Promise.all(Array.from({ length: args.concurrency }, worker));
      if (verified.length > 0) write();
      const runMs = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      await emulator.close();
      const grants = (db.prepare('SELECT COUNT(*) AS n FROM bench_grants').get() as { n: number }).n;
      return {
        fulfilled,
        errors,
        reads,
        runMs,
        cpuMs: (cpu.user + cpu.system) / 1000,
        peakRssKiB: peakRssKiB(),
        grants,
      };
    },
  },
  async () => {
    if (loaded?.db.open) loaded.db.close();
  },
);
