/**
 * Diagnostic (not part of npm run bench): the PostgreSQL store's sweep and landing work in
 * isolation, this kit against another kit version (OLD_KIT_DIR, e.g. `git archive main middleware`
 * unpacked), interleaved rounds on two scratch databases seeded alike. Per attempt it reports the
 * CPU of this process (node-postgres and the store) and of the PostgreSQL backends serving it
 * (/proc/<pid>/stat of the pools' connections), the wall time and the WAL written (load-independent):
 *  - claim: claimDueAttempts in batches of 50 (the sweep's default batch);
 *  - group: fulfilBatch in groups of GROUP (13, the sweep's measured average on PostgreSQL), two
 *    groups at once (the sweep's `parallel` at concurrency 4);
 *  - landing: findAttemptByState then fulfilBatch of one, 8 at once (the landing bench's connections);
 *  - budgets: consumeStartBudgets of a start's three budgets (user, number, address), each new, 8 at
 *    once (a start's first store call; with OPS=budgets only, nothing is seeded for the others).
 *
 *   OLD_KIT_DIR=/tmp/old npx tsx bench/micro/pg-store-micro.ts
 *   NEW_DDL='DROP INDEX ...' OLD_KIT_DIR=... npx tsx bench/micro/pg-store-micro.ts   # a schema experiment, new side only
 */
import { existsSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import type { Attempt } from '../../middleware/store/types.ts';
import { createTestDatabase, type TestDatabase } from '../postgres.ts';
import { ACTION, PG_GRANTS_TABLE, PG_INSERT_GRANT, PG_SEED_ATTEMPTS, SUCCESS_PATH, newState } from '../common.ts';

const ROUNDS = Number(process.env.ROUNDS ?? 6);
const PER_ROUND = Number(process.env.PER_ROUND ?? 3000);
const GROUP = Number(process.env.GROUP ?? 13);
const OLD_KIT_DIR = process.env.OLD_KIT_DIR ?? '/tmp/old';
/** Which of claim, group, landing to run (comma-separated). */
const OPS = (process.env.OPS ?? 'claim,group,landing').split(',');

type Store = {
  ready: Promise<void>;
  claimDueAttempts(o: object): Promise<{ sessionId: string; state: string }[]>;
  fulfilBatch(r: object[]): Promise<{ ok: boolean; result?: { kind: string } }[]>;
  findAttemptByState(state: string): Promise<Attempt | undefined>;
  findAttemptBySessionId(sessionId: string): Promise<Attempt | undefined>;
  consumeStartBudgets(q: object): Promise<unknown>;
  close(): Promise<void>;
};
type Side = { name: string; db: TestDatabase; store: Store; states: string[]; sessions: string[] };

const effect = async (tx: pg.PoolClient, a: { sessionId: string; userRef: string }) => {
  await tx.query({ name: 'bench_grant', text: PG_INSERT_GRANT, values: [a.sessionId, a.userRef] });
};

/** The PostgreSQL store's factory module: in store/postgres/, or in store/ itself in a version without the folders. */
function postgresStoreModule(kitDir: string): string {
  const inFolder = `${kitDir}/store/postgres/postgres.ts`;
  return existsSync(inFolder) ? inFolder : `${kitDir}/store/postgres.ts`;
}

async function open(name: string, dir: string): Promise<Side> {
  const db = await createTestDatabase({ max: 10 });
  const mod = (await import(postgresStoreModule(dir))) as { createPostgresStore(o: object): Store };
  const store = mod.createPostgresStore({ pool: db.pool });
  await store.ready;
  await db.pool.query(PG_GRANTS_TABLE);
  // An experiment's schema change on this side only (e.g. an index dropped), before the seed.
  const ddl = process.env[`${name.toUpperCase()}_DDL`];
  if (ddl !== undefined) await db.pool.query(ddl);
  const seeded = OPS.some((op) => op === 'claim' || op === 'group' || op === 'landing');
  const total = seeded ? (ROUNDS + 1) * PER_ROUND * 3 : 0;
  const states = Array.from({ length: total }, () => newState());
  const sessions = states.map((_, i) => `ses_${name}_${i}`);
  const now = Date.now();
  for (let i = 0; i < total; i += 5000) {
    const users = sessions.slice(i, i + 5000).map((s) => `user-${s}`);
    await db.pool.query(PG_SEED_ATTEMPTS, [
      states.slice(i, i + 5000),
      sessions.slice(i, i + 5000),
      users,
      ACTION,
      SUCCESS_PATH,
      now - 10 * 60_000,
      now - 60_000,
    ]);
  }
  await db.pool.query('VACUUM ANALYZE verify_kit_attempts');
  return { name, db, store, states, sessions };
}

/** CPU ms of the backends connected to this side's database (utime + stime, 10 ms ticks). */
async function backendCpuMs(side: Side): Promise<number> {
  const { rows } = await side.db.pool.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database()',
  );
  let ticks = 0;
  for (const { pid } of rows) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // a backend that just ended
    }
  }
  return ticks * 10;
}

/** The cluster's WAL position in bytes: the sides run one at a time, so a difference is one side's. */
async function walBytes(side: Side): Promise<number> {
  const { rows } = await side.db.pool.query<{ at: string }>(
    "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::text AS at",
  );
  return Number(rows[0]!.at);
}

async function measure(side: Side, work: () => Promise<number>) {
  const w0 = await walBytes(side);
  const b0 = await backendCpuMs(side);
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const n = await work();
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  const b1 = await backendCpuMs(side);
  const w1 = await walBytes(side);
  return { node: (c.user + c.system) / 1000 / n, pg: (b1 - b0) / n, wall: wall / n, wal: (w1 - w0) / n };
}

async function claimRound(side: Side, owner: string): Promise<number> {
  let claimed = 0;
  while (claimed < PER_ROUND) {
    const now = Date.now();
    const batch = await side.store.claimDueAttempts({ now, maxAgeMs: 86_400_000, limit: 50, leaseMs: 60_000, owner });
    claimed += batch.length;
  }
  return claimed;
}

/** The attempts a sweep would hold from its claims (read before the measured round). */
async function attemptsOf(side: Side, from: number): Promise<Attempt[]> {
  const attempts: Attempt[] = [];
  for (const id of side.sessions.slice(from, from + PER_ROUND))
    attempts.push((await side.store.findAttemptBySessionId(id))!);
  return attempts;
}

async function groupRound(side: Side, attempts: Attempt[]): Promise<number> {
  const groups: Attempt[][] = [];
  for (let i = 0; i < attempts.length; i += GROUP) groups.push(attempts.slice(i, i + GROUP));
  const lane = async () => {
    for (let g = groups.shift(); g !== undefined; g = groups.shift()) {
      const settled = await side.store.fulfilBatch(g.map((attempt) => ({ attempt, effect, now: Date.now() })));
      if (!settled.every((s) => s.ok)) throw new Error('a fulfilment failed');
    }
  };
  await Promise.all([lane(), lane()]);
  return attempts.length;
}

async function landingRound(side: Side, from: number): Promise<number> {
  const states = side.states.slice(from, from + PER_ROUND);
  const lane = async () => {
    for (let s = states.shift(); s !== undefined; s = states.shift()) {
      const attempt = await side.store.findAttemptByState(s);
      const [settled] = await side.store.fulfilBatch([{ attempt: attempt!, effect, now: Date.now() }]);
      if (settled?.result?.kind !== 'fulfilled') throw new Error(`landing: ${settled?.result?.kind ?? 'failed'}`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, lane));
  return PER_ROUND;
}

async function budgetsRound(side: Side, round: number): Promise<number> {
  let next = 0;
  const lane = async () => {
    for (let n = next++; n < PER_ROUND; n = next++) {
      const who = `${side.name}-${round}-${n}`;
      await side.store.consumeStartBudgets({
        budgets: [
          { key: `start_user:${who}`, points: 10, durationMs: 3_600_000 },
          { key: `start_destination:+4474009${String(n).padStart(5, '0')}-${round}`, points: 5, durationMs: 600_000 },
          { key: `start_ip:10.${round}.${n >> 8}.${n & 255}`, points: 30, durationMs: 3_600_000 },
        ],
        now: Date.now(),
      });
    }
  };
  await Promise.all(Array.from({ length: 8 }, lane));
  return PER_ROUND;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (xs: number[]) =>
  `${(median(xs) * 1000).toFixed(0)} (${(Math.min(...xs) * 1000).toFixed(0)}-${(Math.max(...xs) * 1000).toFixed(0)})`;

async function main() {
  const sides = [
    await open('new', new URL('../../middleware', import.meta.url).pathname),
    await open('old', OLD_KIT_DIR),
  ];
  type Figures = { node: number[]; pg: number[]; wall: number[]; wal: number[] };
  const figures: Record<string, Record<string, Figures>> = {};
  const record = (
    round: number,
    op: string,
    side: string,
    f: { node: number; pg: number; wall: number; wal: number },
  ) => {
    if (round === 0) return;
    const s = ((figures[op] ??= {})[side] ??= { node: [], pg: [], wall: [], wal: [] });
    s.node.push(f.node);
    s.pg.push(f.pg);
    s.wall.push(f.wall);
    s.wal.push(f.wal);
  };
  for (let round = 0; round <= ROUNDS; round++) {
    // ABBA; round 0 warms both sides up and is not recorded.
    const order = round % 2 === 0 ? sides : [...sides].reverse();
    for (const side of order) {
      const base = round * PER_ROUND * 3;
      if (OPS.includes('claim'))
        record(round, 'claim', side.name, await measure(side, () => claimRound(side, `owner-${round}`)));
      if (OPS.includes('group')) {
        const attempts = await attemptsOf(side, base);
        record(round, 'group', side.name, await measure(side, () => groupRound(side, attempts)));
      }
      const landing = () => landingRound(side, base + PER_ROUND);
      if (OPS.includes('landing')) record(round, 'landing', side.name, await measure(side, landing));
      if (OPS.includes('budgets'))
        record(round, 'budgets', side.name, await measure(side, () => budgetsRound(side, round)));
    }
  }
  console.log(`µs per attempt, median (min-max) of ${ROUNDS} rounds x ${PER_ROUND}; group size ${GROUP}`);
  for (const [op, bySide] of Object.entries(figures)) {
    for (const [side, f] of Object.entries(bySide)) {
      console.log(
        `${op.padEnd(8)} ${side}: node CPU ${fmt(f.node)}, backend CPU ${fmt(f.pg)}, wall ${fmt(f.wall)}, ` +
          `WAL bytes ${median(f.wal).toFixed(0)}`,
      );
    }
  }
  for (const side of sides) {
    await side.store.close();
    await side.db.drop();
  }
}

await main();
