/**
 * The least work any sweep on PostgreSQL can do per attempt, written by hand: read the session's
 * status (Basic auth, the answer parsed and checked: verified, and the echoed state and userRef
 * equal the stored ones), and a share of ONE statement per batch of verified attempts that marks
 * them and writes their grants (one transaction; the reads go on while it commits). With `grants:
 * 'each'` the grants follow the kit's action contract instead, a statement per attempt.
 *
 * No claim: each process takes its own share of the attempts, loaded before the run. It has no
 * lease, no retry, no ordering and no outcome events, so it is not an integration anyone should
 * ship; it shows what this machine allows, so the kit's PostgreSQL sweep can be read against it as
 * well as against the emulator's raw capacity. Beside the landings under the service's rate limit
 * it reads at a set pace, at the sweep job's CPU priority, to show what any sweep making those
 * reads and writes costs the landings on this machine.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { request } from 'undici';
import { basicAuthorization, PG_BASELINE_ATTEMPTS_TABLE, PG_GRANTS_TABLE, PG_INSERT_GRANT } from '../common.ts';
import { loadPool } from '../load.ts';
import { peakRssKiB, serve } from '../ipc.ts';
import { yieldToRequests } from '../../middleware/sweep/cpu-priority.ts';

export interface FloorArgs {
  databaseUrl: string;
  emulatorUrl: string;
  clientId: string;
  secret: string;
  /** This process's share: the attempts whose place in session_id order is `share` modulo `shares`. */
  share: number;
  shares: number;
  concurrency: number;
  /**
   * 'batched': the grants in the marking statement. 'each': the kit's action contract instead (one
   * statement per attempt, the grant's INSERT, in the batch's transaction after one marking UPDATE).
   */
  grants: 'batched' | 'each';
  /** The CPU priority the process takes (the sweep job's), as the kit's sweep processes do. */
  nice?: number;
}

export interface FloorResult {
  fulfilled: number;
  /** Reads that did not answer verified with the stored state and userRef (none is expected). */
  errors: number;
  /** Reads answered 429 (a paced floor may meet a few; they are not read again). */
  limited: number;
  /** The run's own time, ms. */
  runMs: number;
  cpuMs: number;
  peakRssKiB: number;
}

interface FloorAttempt {
  state: string;
  session_id: string;
  user_ref: string;
}

/** Verified attempts per statement (the kit sweep's batch size). */
const BATCH = 50;

/** Marks a batch ($1 its session ids, $2 now), returning what it marked. */
const MARK = `UPDATE attempts SET outcome = 'fulfilled', fulfilled_at = $2
  WHERE session_id = ANY($1::text[]) AND outcome = 'pending' RETURNING session_id, user_ref`;
/** MARK and the grants of what it marked, in one statement. */
const FULFIL = `WITH marked AS (${MARK})
  INSERT INTO bench_grants (session_id, user_ref) SELECT session_id, user_ref FROM marked`;

/** Marks a batch and writes its grants; resolves with how many were marked. */
async function fulfilBatch(db: pg.Pool, batch: string[], grants: FloorArgs['grants']): Promise<number> {
  const values = [batch, Date.now()];
  if (grants === 'batched') return (await db.query({ name: 'floor_fulfil', text: FULFIL, values })).rowCount ?? 0;
  const client = await db.connect();
  try {
    await client.query('BEGIN');
    const marked = await client.query<{ session_id: string; user_ref: string }>({
      name: 'floor_mark',
      text: MARK,
      values,
    });
    for (const r of marked.rows) {
      await client.query({ name: 'floor_grant', text: PG_INSERT_GRANT, values: [r.session_id, r.user_ref] });
    }
    await client.query('COMMIT');
    return marked.rows.length;
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}

let loaded: { args: FloorArgs; attempts: FloorAttempt[]; db: pg.Pool } | undefined;

serve(
  {
    /** Loads this process's share before the timed run. */
    async load(args: FloorArgs): Promise<number> {
      await loaded?.db.end();
      if (args.nice !== undefined) yieldToRequests(args.nice);
      const db = new pg.Pool({ connectionString: args.databaseUrl, max: args.concurrency });
      await db.query(`${PG_BASELINE_ATTEMPTS_TABLE}; ${PG_GRANTS_TABLE}`);
      const { rows } = await db.query<FloorAttempt>(
        "SELECT state, session_id, user_ref FROM attempts WHERE outcome = 'pending' ORDER BY session_id",
      );
      loaded = { args, attempts: rows.filter((_, i) => i % args.shares === args.share), db };
      return loaded.attempts.length;
    },

    /** `readsPerSecond`: this process's reads a second, evenly spaced (unset: as fast as `concurrency` allows). */
    async run(pace: { readsPerSecond?: number } | undefined): Promise<FloorResult> {
      if (loaded === undefined) throw new Error('call load first');
      const { args, attempts, db } = loaded;
      const emulator = loadPool(new URL(args.emulatorUrl).origin, args.concurrency);
      const headers = { authorization: basicAuthorization(args.clientId, args.secret), accept: 'application/json' };
      let next = 0;
      let fulfilled = 0;
      let errors = 0;
      let limited = 0;
      let verified: string[] = [];
      const writes: Promise<void>[] = [];
      const write = () => {
        const batch = verified;
        verified = [];
        writes.push(fulfilBatch(db, batch, args.grants).then((n) => void (fulfilled += n)));
      };
      const readsPerSecond = pace?.readsPerSecond;
      const spacingMs = readsPerSecond === undefined || readsPerSecond <= 0 ? 0 : 1000 / readsPerSecond;
      let nextSlot = 0;
      const paced = async () => {
        if (spacingMs === 0) return;
        const now = performance.now();
        const slot = Math.max(now, nextSlot);
        nextSlot = slot + spacingMs;
        if (slot > now) await sleep(slot - now);
      };
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      const worker = async () => {
        for (let a = attempts[next++]; a !== undefined; a = attempts[next++]) {
          await paced();
          const answer = await request(`${args.emulatorUrl}/session/${encodeURIComponent(a.session_id)}`, {
            dispatcher: emulator,
            headers,
          });
          if (answer.statusCode === 429) {
            limited++;
            await answer.body.dump();
            continue;
          }
          const status = (await answer.body.json()) as { status?: string; state?: string; userRef?: string };
          const ok = answer.statusCode === 200 && status.status === 'verified';
          if (!ok || status.state !== a.state || status.userRef !== a.user_ref) {
            errors++;
            continue;
          }
          if (verified.push(a.session_id) >= BATCH) write();
        }
      };
      await Promise.all(Array.from({ length: args.concurrency }, worker));
      if (verified.length > 0) write();
      await Promise.all(writes);
      const runMs = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      await emulator.close();
      return { fulfilled, errors, limited, runMs, cpuMs: (cpu.user + cpu.system) / 1000, peakRssKiB: peakRssKiB() };
    },
  },
  async () => {
    await loaded?.db.end();
  },
);
