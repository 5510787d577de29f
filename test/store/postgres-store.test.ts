/**
 * What only the PostgreSQL store does; the shared contract is in conformance.test.ts. Every test
 * gets its own scratch database.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPostgresStore, type PostgresStore } from '../../middleware/store/postgres/postgres.ts';
import { inTransaction } from '../../middleware/store/postgres/postgres-query.ts';
import { migrate, SCHEMA_VERSION } from '../../middleware/store/postgres/postgres-schema.ts';
import { ROUTINES, SQL } from '../../middleware/store/postgres/postgres-sql.ts';
import { UNPACED } from '../../middleware/sweep/pacing.ts';
import { newSweepOwner } from '../../middleware/sweep/sweep-options.ts';
import { createTestDatabase, postgresUnavailable, recordingPool, type TestDatabase } from '../support/postgres.ts';
import { fulfilOnce, newAttempt, storedAttempt } from '../support/attempts.ts';
import { waitFor } from '../support/wait-for.ts';

const attempt = (n: number) =>
  newAttempt(n, { userRef: 'user-1', action: 'grant', sensitivity: 'normal', createdAt: 1_000, nextCheckAt: 1_000 });

let database: TestDatabase;
let store: PostgresStore;
const pools: pg.Pool[] = [];

/** Backends of this test's database waiting on a lock (a row's, or a pair's advisory lock). */
async function lockWaiters(): Promise<number> {
  const { rows } = await database.pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
  );
  return rows[0]?.n ?? 0;
}

function newPool(max = 5): pg.Pool {
  const pool = new pg.Pool({ connectionString: database.url, max });
  pools.push(pool);
  return pool;
}

/** A recording pool (test/support/postgres.ts) closed with the others after each test. */
function recordingPoolClosedAfter(): { pool: pg.Pool; sent: string[] } {
  const recording = recordingPool(database.url);
  pools.push(recording.pool);
  return recording;
}

/** The connection's synchronous_commit, as the next COMMIT on it would use it. */
async function synchronousCommit(on: pg.Pool | pg.PoolClient): Promise<string | undefined> {
  return (await on.query<{ setting: string }>("SELECT current_setting('synchronous_commit') AS setting")).rows[0]
    ?.setting;
}

describe.skipIf(postgresUnavailable !== undefined)('PostgreSQL store', () => {
  beforeEach(async () => {
    database = await createTestDatabase();
    store = createPostgresStore({ pool: database.pool });
    await store.ready;
    await database.pool.query('CREATE TABLE effects (session_id TEXT NOT NULL, note TEXT)');
  });
  afterEach(async () => {
    for (const pool of pools.splice(0)) await pool.end().catch(() => {});
    await database.drop();
  });

  it('migrates once when eight instances start at the same moment on an empty database', async () => {
    const fresh = await createTestDatabase();
    const freshPools = Array.from({ length: 8 }, () => new pg.Pool({ connectionString: fresh.url, max: 2 }));
    try {
      const instances = freshPools.map((pool) => createPostgresStore({ pool }));
      await Promise.all(instances.map((s) => s.ready));
      const { rows } = await fresh.pool.query<{ version: number }>('SELECT version FROM verify_kit_schema');
      expect(rows).toEqual([{ version: SCHEMA_VERSION }]);
      await instances[3]!.insertAttempt(attempt(1));
      expect(await instances[6]!.findAttemptByState('state-1')).toMatchObject({ sessionId: 'session-1' });
    } finally {
      for (const pool of freshPools) await pool.end();
      await fresh.drop();
    }
  });

  it('starts on an up-to-date database without writing: the schema row keeps the transaction that wrote it', async () => {
    const writer = async () =>
      (await database.pool.query<{ xmin: string }>('SELECT xmin::text AS xmin FROM verify_kit_schema')).rows;
    const before = await writer();
    await createPostgresStore({ pool: newPool() }).ready;
    expect(await writer()).toEqual(before);
    expect(before).toHaveLength(1);
  });

  it('commits the sweep pace without waiting for a disk flush, and every fulfilment waiting for one', async () => {
    const { pool, sent } = recordingPoolClosedAfter();
    const single = createPostgresStore({ pool });
    await single.insertAttempt(attempt(1));
    sent.length = 0;
    await single.updateSweepPace?.(() => ({ ...UNPACED, ratePerSecond: 10, tokensAt: 1_000 }));
    const paceBegins = sent.filter((text) => text.startsWith('BEGIN'));
    sent.length = 0;
    await fulfilOnce(single, await storedAttempt(single, 'session-1'), () => {}, 2_000);
    expect(paceBegins).toEqual(['BEGIN; SET LOCAL synchronous_commit TO OFF']);
    expect(sent.filter((text) => text.startsWith('BEGIN'))).toEqual(['BEGIN']);
    expect((await single.updateSweepPace?.(() => undefined))?.ratePerSecond).toBe(10);
  });

  it('ends an unflushed commit with its transaction: the pooled connection waits for the flush again', async () => {
    const pool = newPool(1);
    const db = { pool, ready: Promise.resolve() };
    expect(await inTransaction(db, synchronousCommit, 'unflushed')).toBe('off');
    expect(await inTransaction(db, synchronousCommit)).toBe('on');
    expect(await synchronousCommit(pool)).toBe('on');
  });

  it('awaits an async effect inside the transaction: nobody sees the mark or the effect before COMMIT', async () => {
    await store.insertAttempt(attempt(1));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let inside!: () => void;
    const entered = new Promise<void>((resolve) => (inside = resolve));
    const fulfilment = fulfilOnce(
      store,
      await storedAttempt(store, 'session-1'),
      async (tx, a) => {
        await tx.query('INSERT INTO effects (session_id) VALUES ($1)', [a.sessionId]);
        inside();
        await held;
      },
      5,
    );
    await entered;
    // Another instance's view, mid-transaction: still pending, no effect.
    const other = createPostgresStore({ pool: newPool() });
    expect((await other.findAttemptByState('state-1'))?.outcome).toBe('pending');
    expect((await database.pool.query('SELECT count(*)::int AS n FROM effects')).rows[0]).toEqual({ n: 0 });
    // A concurrent fulfilment waits on the lock the open transaction holds, then finds it fulfilled:
    // the effect ran once. The racer is seen waiting in PostgreSQL before the first one may commit.
    const second = async (tx: pg.PoolClient) => void (await tx.query("INSERT INTO effects VALUES ('x')"));
    let racerSettled = false;
    const racer = fulfilOnce(other, await storedAttempt(other, 'session-1'), second, 6).finally(
      () => (racerSettled = true),
    );
    await waitFor(async () => (await lockWaiters()) > 0, 10_000, "the racer to wait on the fulfilment's lock");
    expect(racerSettled).toBe(false);
    release();
    expect((await fulfilment).kind).toBe('fulfilled');
    expect((await racer).kind).toBe('already_fulfilled');
    expect((await database.pool.query('SELECT count(*)::int AS n FROM effects')).rows[0]).toEqual({ n: 1 });
  });

  // "An older attempt must never be applied after a newer one": the mark reads after the pair's lock.
  it.each(['alone', 'in a group'] as const)(
    "a fulfilment %s waits for its pair's lock, then sees the newer attempt committed meanwhile and is superseded",
    async (how) => {
      await store.insertAttempt(attempt(1));
      await store.insertAttempt(attempt(2));
      await store.insertAttempt({ ...attempt(3), userRef: 'user-3' });
      // Another instance applying the newer attempt holds the (user, action) lock until it commits.
      const other = await newPool(1).connect();
      try {
        await other.query('BEGIN');
        await other.query("SELECT pg_advisory_xact_lock(hashtextextended('user-1' || chr(31) || 'grant', 0))");
        await other.query(
          "UPDATE verify_kit_attempts SET outcome = 'fulfilled', fulfilled_at = 7, finished_at = 7 WHERE session_id = 'session-2'",
        );
        const applied: string[] = [];
        const effect = (_tx: pg.PoolClient, a: { sessionId: string }) => void applied.push(a.sessionId);
        const older = await storedAttempt(store, 'session-1');
        let settled = false;
        const kinds = (
          how === 'alone'
            ? fulfilOnce(store, older, effect, 8).then((result) => [result.kind])
            : store
                .fulfilBatch(
                  [older, await storedAttempt(store, 'session-3')].map((a) => ({ attempt: a, effect, now: 8 })),
                )
                .then((settlements) => settlements.map((s) => (s.ok ? s.result.kind : 'error')))
        ).finally(() => (settled = true));
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(settled).toBe(false);
        await other.query('COMMIT');
        expect(await kinds).toEqual(how === 'alone' ? ['superseded'] : ['superseded', 'fulfilled']);
        expect(applied).toEqual(how === 'alone' ? [] : ['session-3']);
        expect((await storedAttempt(store, 'session-1')).outcome).toBe('superseded');
      } finally {
        other.release();
      }
    },
  );

  it('commits nothing when the action swallowed an SQL error, which aborts the transaction', async () => {
    await store.insertAttempt(attempt(1));
    const swallowing = async (tx: pg.PoolClient) => {
      await tx.query("INSERT INTO effects (session_id) VALUES ('before')");
      await tx.query('INSERT INTO no_such_table VALUES (1)').catch(() => {});
    };
    await expect(fulfilOnce(store, await storedAttempt(store, 'session-1'), swallowing, 5)).rejects.toThrow(
      /aborted by an error inside the action/,
    );
    expect((await store.findAttemptByState('state-1'))?.outcome).toBe('pending');
    expect((await database.pool.query('SELECT count(*)::int AS n FROM effects')).rows[0]).toEqual({ n: 0 });
    // The pool is still healthy afterwards.
    expect((await fulfilOnce(store, await storedAttempt(store, 'session-1'), () => {}, 6)).kind).toBe('fulfilled');
  });

  it('in a group, rolls back only the attempt whose action swallowed an SQL error; the others commit', async () => {
    for (const n of [1, 2, 3]) await store.insertAttempt({ ...attempt(n), userRef: `user-${n}` });
    const writes = (note: string) => async (tx: pg.PoolClient, a: { sessionId: string }) =>
      void (await tx.query('INSERT INTO effects (session_id, note) VALUES ($1, $2)', [a.sessionId, note]));
    const swallowing = async (tx: pg.PoolClient, a: { sessionId: string }) => {
      await writes('before')(tx, a);
      await tx.query('INSERT INTO no_such_table VALUES (1)').catch(() => {});
    };
    const settlements = await store.fulfilBatch([
      { attempt: await storedAttempt(store, 'session-1'), effect: writes('ok'), now: 5 },
      { attempt: await storedAttempt(store, 'session-2'), effect: swallowing, now: 5 },
      { attempt: await storedAttempt(store, 'session-3'), effect: writes('ok'), now: 5 },
    ]);
    expect(settlements.map((s) => s.ok)).toEqual([true, false, true]);
    expect(settlements[1]).toMatchObject({
      error: { message: expect.stringMatching(/aborted by an error inside the action/) },
    });
    const { rows } = await database.pool.query('SELECT session_id, note FROM effects ORDER BY session_id');
    expect(rows).toEqual([
      { session_id: 'session-1', note: 'ok' },
      { session_id: 'session-3', note: 'ok' },
    ]);
    expect((await store.findAttemptByState('state-2'))?.outcome).toBe('pending');
    expect((await store.findAttemptByState('state-3'))?.outcome).toBe('fulfilled');
  });

  it('reads an attempt back field for field (one JSON column) by state, by claim and as superseded by the mark', async () => {
    const params = { amount: 12.5, note: 'caf\u00e9 "quoted" \\ \u{1F600}', nested: [null, true, { n: 1 }] };
    const created = 1_795_000_000_123;
    const serviceUserRef = 'vkd1_bound-to-user-and-number';
    const clientId = 'client-\u00e9';
    await store.insertAttempt({
      ...attempt(1),
      serviceUserRef,
      clientId,
      params,
      createdAt: created,
      nextCheckAt: created,
    });
    const expected = {
      state: 'state-1',
      sessionId: 'session-1',
      userRef: 'user-1',
      serviceUserRef,
      action: 'grant',
      params,
      destination: '+15550100001',
      returnTo: '/done',
      sensitivity: 'normal',
      platform: 'web',
      createdAt: created,
      outcome: 'pending',
      failureReason: null,
      fulfilledAt: null,
      finishedAt: null,
      nextCheckAt: created,
      sweepChecks: 0,
      supersededBy: null,
      clientId,
    };
    const found = await store.findAttemptByState('state-1');
    expect(found).toEqual({ ...expected, startSeq: expect.any(Number) });
    const [claimed] = await store.claimDueAttempts({
      now: created + 1,
      maxAgeMs: 10_000,
      limit: 5,
      leaseMs: 1_000,
      owner: 'o',
    });
    expect(claimed).toEqual(found);
    expect(await store.findAttemptBySessionId('session-1')).toMatchObject(found!);
    // A newer attempt of the same user and action supersedes it: the mark returns it whole.
    await store.insertAttempt({ ...attempt(2), createdAt: created, nextCheckAt: created });
    const result = await fulfilOnce(store, await storedAttempt(store, 'session-2'), () => {}, created + 2);
    const superseded = { ...found, outcome: 'superseded', supersededBy: 'session-2', finishedAt: created + 2 };
    expect(result).toMatchObject({ kind: 'fulfilled', superseded: [superseded] });
    expect(result.kind === 'fulfilled' && result.superseded[0]).toEqual(superseded);
  });

  it('a group with a throwing action is settled again one attempt per transaction, on a pool of one connection', async () => {
    // The group has no savepoints: the throw rolls back all of it, then each attempt runs alone.
    const single = createPostgresStore({ pool: newPool(1) });
    for (const n of [1, 2, 3, 4]) await single.insertAttempt({ ...attempt(n), userRef: `user-${n}` });
    const runs: string[] = [];
    const writes = async (tx: pg.PoolClient, a: { sessionId: string }) => {
      runs.push(a.sessionId);
      await tx.query('INSERT INTO effects (session_id) VALUES ($1)', [a.sessionId]);
      if (a.sessionId === 'session-3') throw new Error('provider down');
    };
    const ids = ['session-4', 'session-3', 'session-2', 'session-1'];
    const requests = [];
    for (const id of ids) requests.push({ attempt: await storedAttempt(single, id), effect: writes, now: 5 });
    const settlements = await single.fulfilBatch(requests);
    expect(settlements.map((s) => s.ok)).toEqual([true, false, true, true]);
    // First together in lock order up to the throw, then each alone in the caller's order.
    expect(runs).toEqual(['session-1', 'session-2', 'session-3', 'session-4', 'session-3', 'session-2', 'session-1']);
    const { rows } = await database.pool.query('SELECT session_id FROM effects ORDER BY session_id');
    expect(rows.map((r: { session_id: string }) => r.session_id)).toEqual(['session-1', 'session-2', 'session-4']);
    expect((await single.findAttemptByState('state-3'))?.outcome).toBe('pending');
    expect(await fulfilOnce(single, await storedAttempt(single, 'session-4'), writes, 6)).toMatchObject({
      kind: 'already_fulfilled',
    });
  });

  it('rolls back when the effect throws after writing, and returns its connection to the pool', async () => {
    const pool = newPool(1);
    const single = createPostgresStore({ pool });
    await single.insertAttempt(attempt(1));
    for (let i = 0; i < 3; i++) {
      await expect(
        fulfilOnce(
          single,
          await storedAttempt(single, 'session-1'),
          async (tx) => {
            await tx.query("INSERT INTO effects (session_id) VALUES ('s')");
            throw new Error('provider down');
          },
          5,
        ),
      ).rejects.toThrow('provider down');
    }
    // With one connection, a leaked one would hang here.
    expect((await fulfilOnce(single, await storedAttempt(single, 'session-1'), () => {}, 6)).kind).toBe('fulfilled');
    expect((await database.pool.query('SELECT count(*)::int AS n FROM effects')).rows[0]).toEqual({ n: 0 });
  });

  it('a connection the database ends while the action awaits inside the transaction fails that fulfilment, commits nothing and throws no unhandled error; the next commits', async () => {
    const pool = newPool(1);
    const single = createPostgresStore({ pool });
    await single.insertAttempt(attempt(1));
    const endedByTheDatabase = async (tx: pg.PoolClient) => {
      await tx.query("INSERT INTO effects (session_id) VALUES ('s')");
      const { rows } = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      // The action waits on something else (no statement in flight) when the backend is terminated.
      const ended = new Promise((resolve) => tx.once('end', resolve));
      await database.pool.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
      await ended;
    };
    await expect(fulfilOnce(single, await storedAttempt(single, 'session-1'), endedByTheDatabase, 5)).rejects.toThrow(
      'terminating connection due to administrator command',
    );
    expect((await database.pool.query('SELECT count(*)::int AS n FROM effects')).rows[0]).toEqual({ n: 0 });
    // The lost connection left the pool of one: the next fulfilment gets a new one and commits.
    expect((await fulfilOnce(single, await storedAttempt(single, 'session-1'), () => {}, 6)).kind).toBe('fulfilled');
  });

  it('reports an unreachable database from every call and from ready, without an unhandled rejection', async () => {
    const nowhere = 'postgres://postgres@127.0.0.1:1/nowhere';
    const pool = new pg.Pool({ connectionString: nowhere, connectionTimeoutMillis: 500 });
    pools.push(pool);
    const broken = createPostgresStore({ pool });
    await expect(broken.ready).rejects.toThrow();
    await expect(broken.findAttemptByState('x')).rejects.toThrow();
  });

  it('migrates on a later call when the database was unreachable as the store started, instead of failing every call for good', async () => {
    const fresh = await createTestDatabase();
    const pool = new pg.Pool({ connectionString: fresh.url, max: 2 });
    try {
      // The database restarting as the app starts: the migration's connection is refused once.
      const connect = pool.connect.bind(pool) as (...args: unknown[]) => unknown;
      let refusals = 1;
      pool.connect = ((...args: unknown[]) =>
        args.length === 0 && refusals-- > 0
          ? Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'))
          : connect(...args)) as typeof pool.connect;
      const started = createPostgresStore({ pool });
      await expect(started.ready).rejects.toThrow('ECONNREFUSED');
      await started.insertAttempt(attempt(1));
      expect(await started.findAttemptByState('state-1')).toMatchObject({ sessionId: 'session-1' });
      const { rows } = await fresh.pool.query<{ version: number }>('SELECT version FROM verify_kit_schema');
      expect(rows).toEqual([{ version: SCHEMA_VERSION }]);
    } finally {
      await pool.end();
      await fresh.drop();
    }
  });

  it('never calls a routine another kit version created with the same body and another header: a routine is named by its whole definition', async () => {
    const fresh = await createTestDatabase();
    const pool = new pg.Pool({ connectionString: fresh.url, max: 2 });
    try {
      await migrate(pool, SCHEMA_VERSION - 1);
      // The lone mark as a version naming routines by their body alone would have created it, STABLE.
      const mark = ROUTINES.find((r) => r.signature.startsWith('verify_kit_mark_fulfilled_'))!;
      const body = mark.create.split('$fn$')[1]!.replace(/\n {6}$/, '');
      const byBody = `verify_kit_mark_fulfilled_${createHash('sha256').update(body).digest('hex').slice(0, 16)}`;
      const name = mark.signature.slice(0, mark.signature.indexOf('('));
      await pool.query(mark.create.replace(name, byBody).replace('VOLATILE', 'STABLE'));
      const store = createPostgresStore({ pool });
      await store.ready;
      await store.insertAttempt(attempt(1));
      const fulfilled = await fulfilOnce(store, await storedAttempt(store, 'session-1'), () => {}, 2_000);
      expect(fulfilled.kind).toBe('fulfilled');
    } finally {
      await pool.end();
      await fresh.drop();
    }
  });

  it("lets an older kit start on a database a newer kit migrated: it creates the routines it calls beside the newer kit's, and leaves those alone", async () => {
    // The newer kit's version of the mark: another definition, so another name; the older kit's own is missing.
    const mark = ROUTINES.find((r) => r.signature.startsWith('verify_kit_mark_fulfilled_'))!;
    const newer = 'verify_kit_mark_fulfilled_0123456789abcdef';
    await database.pool.query(`ALTER FUNCTION ${mark.signature} RENAME TO ${newer}`);
    const newerSignature = mark.signature.replace(/^[^(]+/, newer);
    const definition = async (signature: string) =>
      (
        await database.pool.query<{ def: string | null }>('SELECT pg_get_functiondef(to_regprocedure($1)) AS def', [
          signature,
        ])
      ).rows[0]!.def;
    const newerBefore = await definition(newerSignature);
    await migrate(database.pool, SCHEMA_VERSION - 2, SCHEMA_VERSION - 2);
    expect(await definition(mark.signature)).not.toBeNull();
    expect(await definition(newerSignature)).toBe(newerBefore);
    const { rows } = await database.pool.query<{ version: number }>('SELECT version FROM verify_kit_schema');
    expect(rows).toEqual([{ version: SCHEMA_VERSION }]);
  });

  it("reads a browser session's grants down its own index: every equality the guard asks is an index condition", async () => {
    const client = await database.pool.connect();
    try {
      // A user with 2,000 grants over 200 browser sessions and 10 resources, as the statistics know them.
      await client.query(`INSERT INTO verify_kit_grants
        SELECT 'grant-' || n, 'u', 's', 'r' || (n % 10), 'b' || (n % 200), n, n FROM generate_series(1, 2000) AS n`);
      await client.query('ANALYZE verify_kit_grants');
      const plan = async (name: 'listResourceGrants' | 'listSessionGrants', params: unknown[]) => {
        await client.query(`PREPARE ${name} AS ${SQL[name]}`);
        const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN EXECUTE ${name}(${params.join(', ')})`);
        return rows.map((row) => row['QUERY PLAN']).join('\n');
      };
      const resource = await plan('listResourceGrants', ["'u'", "'s'", "'b7'", "'r7'", 0, 0, 50]);
      expect(resource).toMatch(/(using|on) verify_kit_grants_session/);
      expect(resource).toMatch(
        /Index Cond: \(\(user_ref = 'u'::text\) AND \(scope = 's'::text\) AND \(browser_session = 'b7'::text\) AND \(resource_key = 'r7'::text\) AND \(started_at >= /,
      );
      const session = await plan('listSessionGrants', ["'u'", "'s'", "'b7'", 0, 0, 50]);
      expect(session).toMatch(/(using|on) verify_kit_grants_session/);
      expect(session).toMatch(
        /Index Cond: \(\(user_ref = 'u'::text\) AND \(scope = 's'::text\) AND \(browser_session = 'b7'::text\)/,
      );
    } finally {
      client.release();
    }
  });

  it('runs every statement as a named prepared statement, under the names it has always had (verify_kit_<key>)', async () => {
    // One connection, so pg_prepared_statements (per session) lists every statement the calls below prepared.
    const single = createPostgresStore({ pool: newPool(1) });
    const event = { source: 'sweep' } as const;
    const noEffect = () => {};
    for (const n of [1, 2, 3, 4, 5]) await single.insertAttempt(attempt(n));
    for (const n of [6, 7]) await single.insertAttempt({ ...attempt(n), userRef: `user-${n}`, nextCheckAt: 9_000 });
    await single.findAttemptByState('state-1');
    // A group of two is marked (its pair locks taken) by markFulfilledGroupLocked; a fulfilOnce below
    // by markFulfilled ('latest') or markFulfilledIndependent.
    const group = [await storedAttempt(single, 'session-6'), await storedAttempt(single, 'session-7')];
    await single.fulfilBatch(group.map((a) => ({ attempt: a, effect: noEffect, now: 2_000 })));
    // session-2 applied without ordering leaves session-1 pending; fulfilling it with 'latest' then supersedes it.
    await fulfilOnce(single, await storedAttempt(single, 'session-2'), noEffect, 2_000, {
      ordering: 'independent',
      event,
    });
    await fulfilOnce(single, await storedAttempt(single, 'session-1'), noEffect, 2_000, { event });
    await fulfilOnce(single, await storedAttempt(single, 'session-2'), noEffect, 2_000, { event }); // already fulfilled: read back by sessionId
    await single.recordFailure('session-3', 'failed', 2_000, event);
    const claimed = await single.claimDueAttempts({
      now: 2_000,
      maxAgeMs: 10_000,
      limit: 5,
      leaseMs: 1_000,
      owner: 'o',
    });
    expect(claimed.map((a) => a.sessionId).sort()).toEqual(['session-4', 'session-5']);
    await single.scheduleNextChecks('o', [{ sessionId: 'session-4', nextCheckAt: 3_000 }]);
    await single.releaseClaims('o');
    await single.expireAttempts(2_000, 500, event);
    const events = await single.claimOutcomeEvents({ now: 2_000, owner: 'o', leaseMs: 1_000, limit: 10 });
    await single.markOutcomeEventDelivered(events[0]!.eventId, 'o', 2_000);
    await single.retryOutcomeEvent(events[1]!.eventId, 'o', 2_500);
    await single.consumeStartBudgets({ budgets: [{ key: 'k', points: 1, durationMs: 1_000 }], now: 2_000 });
    await single.findAttemptBySessionId('session-1');
    await single.listAttempts({ limit: 10 });
    await single.applyRetention({ now: 2_000, redactBefore: 1_000, deleteBefore: 1_000, limit: 10 });

    const { rows } = await single.pool.query<{ name: string }>('SELECT name FROM pg_prepared_statements');
    expect(rows.map((row) => row.name).sort()).toEqual([
      'verify_kit_bySession',
      'verify_kit_bySessions',
      'verify_kit_byState',
      'verify_kit_claimDue',
      'verify_kit_claimEvents',
      'verify_kit_consumeStartBudgets',
      'verify_kit_delete',
      'verify_kit_deleteEndedBudgets',
      'verify_kit_eventDelivered',
      'verify_kit_eventRetry',
      'verify_kit_expire',
      'verify_kit_housekeeping_bySession',
      'verify_kit_housekeeping_list',
      'verify_kit_insert',
      'verify_kit_insertEvent',
      'verify_kit_markFailed',
      'verify_kit_markFulfilled',
      'verify_kit_markFulfilledGroupLocked',
      'verify_kit_markFulfilledIndependent',
      'verify_kit_markSuperseded',
      'verify_kit_newerFulfilled',
      'verify_kit_redact',
      'verify_kit_release',
      'verify_kit_reschedule',
    ]);
  });

  it('claims a batch in place: every claimed row is a HOT update, so a claim writes no index entry', async () => {
    // One connection, so the statistics this test reads are the ones its claim wrote.
    const single = createPostgresStore({ pool: newPool(1) });
    await single.ready;
    for (let n = 1; n <= 120; n++) await single.insertAttempt({ ...attempt(n), userRef: `user-${n}` });
    const updates = async () => {
      await single.pool.query('SELECT pg_stat_force_next_flush()');
      const { rows } = await single.pool.query<{ updated: string; hot: string }>(
        "SELECT n_tup_upd AS updated, n_tup_hot_upd AS hot FROM pg_stat_user_tables WHERE relname = 'verify_kit_attempts'",
      );
      return { updated: Number(rows[0]!.updated), hot: Number(rows[0]!.hot) };
    };
    const before = await updates();
    const claim = { now: 5_000, maxAgeMs: 86_400_000, limit: 100, leaseMs: 60_000, owner: newSweepOwner() };
    expect(await single.claimDueAttempts(claim)).toHaveLength(100);
    const after = await updates();
    // Rows that find no room in their page are written anew, with an entry in every index.
    expect(after.updated - before.updated).toBe(100);
    expect(after.hot - before.hot).toBe(100);
  });

  it('never lists a grant whose write commits after a revocation that committed while it ran', async () => {
    const written = ['session-1', 'user-1', 'security', '', 'browser-1', 1_000, 5_000];
    // The landing's grant is written and not committed yet when another request revokes.
    const landing = await database.pool.connect();
    try {
      await landing.query('BEGIN');
      await landing.query(SQL.insertGrant, written);
      // The grant, not committed yet, is not there to delete.
      expect(await store.stepUp.revokeGrants({ userRef: 'user-1', now: 2_000 })).toBe(0);
      await landing.query('COMMIT');
    } finally {
      landing.release();
    }
    const { rows } = await database.pool.query('SELECT session_id FROM verify_kit_grants');
    expect(rows).toEqual([{ session_id: 'session-1' }]);
    expect(await store.stepUp.listGrants({ userRef: 'user-1', limit: 10 })).toEqual([]);
  });

  it('gives a kept form to one of two confirmations that overlap on two connections: the second waits, then gets nothing', async () => {
    const kept = {
      intentId: 'intent-1',
      userRef: 'user-1',
      scope: 'payout',
      browserSession: 'browser-1',
      resourceKey: 'acct-1',
      method: 'POST',
      path: '/accounts/acct-1/payee',
      fields: { iban: 'IBAN-SECRET-1' },
      createdAt: 1_000,
      expiresAt: 900_000,
    };
    expect(await store.stepUp.insertIntent(kept, 20)).toBe(true);
    // The first confirmation has consumed it and not committed yet when the second one reads it.
    const first = await database.pool.connect();
    try {
      await first.query('BEGIN');
      const { rows } = await first.query(SQL.consumeIntent, ['intent-1', 2_000]);
      expect(rows).toHaveLength(1);
      const second = store.stepUp.consumeIntent('intent-1', 2_001);
      await waitFor(async () => (await lockWaiters()) === 1, 10_000, 'the second confirmation to wait on the row lock');
      await first.query('COMMIT');
      expect(await second).toBeUndefined();
    } finally {
      first.release();
    }
  });

  it('rejects an option that is not a pg Pool, saying what to pass', () => {
    expect(() => createPostgresStore({ pool: {} as pg.Pool })).toThrow(/must be a node-postgres Pool/);
  });
});

describe.skipIf(postgresUnavailable !== undefined)('upgrading a version-3 PostgreSQL database', () => {
  it('keeps every attempt, drops the lease, per-user and start_seq indexes, and still releases a lease', async () => {
    const old = await createTestDatabase();
    try {
      await migrate(old.pool, 3);
      const insert = `INSERT INTO verify_kit_attempts (state, session_id, user_ref, action, params, destination, return_to,
          sensitivity, platform, created_at, outcome, finished_at, next_check_at, lease_owner, lease_until)
        VALUES ($1, $2, 'user-a', 'confirm_phone', 'null', '+15550100001', '/done', 'normal', 'web', $3, $4, $5, 0, $6, $7)`;
      await old.pool.query(insert, ['state-1', 'session-1', 1000, 'pending', null, 'sweep-a', 9_000_000_000_000]);
      await old.pool.query(insert, ['state-2', 'session-2', 2000, 'fulfilled', 2500, null, null]);
      const before = (await old.pool.query('SELECT * FROM verify_kit_attempts ORDER BY start_seq')).rows;

      const upgraded = createPostgresStore({ pool: old.pool });
      await upgraded.ready;
      const { rows: version } = await old.pool.query('SELECT version FROM verify_kit_schema');
      expect(version).toEqual([{ version: SCHEMA_VERSION }]);
      // Every column kept; the service's userRef was the user's own for every attempt stored before,
      // and no client id was recorded.
      const after = (await old.pool.query('SELECT * FROM verify_kit_attempts ORDER BY start_seq')).rows;
      expect(after.map(({ service_user_ref: _ref, client_id: _client, ...kept }) => kept)).toEqual(before);
      expect(after.map((row) => row.service_user_ref)).toEqual([null, null]);
      expect(after.map((row) => row.client_id)).toEqual([null, null]);
      const { rows: indexes } = await old.pool.query<{ indexname: string }>(
        "SELECT indexname FROM pg_indexes WHERE tablename = 'verify_kit_attempts' ORDER BY indexname",
      );
      expect(indexes.map((i) => i.indexname)).toEqual([
        'verify_kit_attempts_age',
        'verify_kit_attempts_due',
        'verify_kit_attempts_intent',
        'verify_kit_attempts_pkey',
        'verify_kit_attempts_session_id_key',
        'verify_kit_attempts_settled',
      ]);
      const { rows: options } = await old.pool.query(
        "SELECT reloptions FROM pg_class WHERE relname = 'verify_kit_attempts'",
      );
      expect(options).toEqual([{ reloptions: ['fillfactor=45'] }]);

      // The release finds the lease without its index; new attempts still start after the old ones.
      expect(await upgraded.releaseClaims('sweep-a')).toBe(1);
      expect(await storedAttempt(upgraded, 'session-1')).toMatchObject({ outcome: 'pending' });
      const { rows: leases } = await old.pool.query(
        'SELECT lease_owner FROM verify_kit_attempts WHERE lease_owner IS NOT NULL',
      );
      expect(leases).toEqual([]);
      await upgraded.insertAttempt(attempt(9));
      const oldest = Math.max(...before.map((row: { start_seq: string }) => Number(row.start_seq)));
      expect((await storedAttempt(upgraded, 'session-9')).startSeq).toBeGreaterThan(oldest);
      // The upgraded store created its mark routine: a landing's fulfilment goes through it, and
      // session-1 comes back superseded by session-2 (newer, already fulfilled before the upgrade).
      const effect = () => {};
      const landing = await fulfilOnce(upgraded, await storedAttempt(upgraded, 'session-1'), effect, 3000);
      expect(landing).toMatchObject({ kind: 'superseded', attempt: { supersededBy: 'session-2' } });
    } finally {
      await old.drop();
    }
  });
});

describe.skipIf(postgresUnavailable !== undefined)('upgrading a version-10 PostgreSQL database', () => {
  it('keeps every step-up grant and kept form, and records revocations in the new table', async () => {
    const old = await createTestDatabase();
    try {
      await migrate(old.pool, 10);
      await old.pool.query(`
        INSERT INTO verify_kit_grants VALUES ('session-1', 'user-a', 'security', '', 'browser-1', 1000, 1500);
        INSERT INTO verify_kit_intents VALUES ('intent-1', 'user-a', 'payout', 'browser-1', 'acct-1', 'POST',
          '/accounts/acct-1/payee', '{"iban":"FR76"}', 1000, 901000, NULL);`);

      const upgraded = createPostgresStore({ pool: old.pool });
      await upgraded.ready;
      const { rows: version } = await old.pool.query('SELECT version FROM verify_kit_schema');
      expect(version).toEqual([{ version: SCHEMA_VERSION }]);
      const { stepUp } = upgraded;
      const grants = await stepUp.listGrants({ userRef: 'user-a', limit: 10 });
      expect(grants.map((g) => g.sessionId)).toEqual(['session-1']);
      expect(await stepUp.consumeIntent('intent-1', 2000)).toMatchObject({ fields: { iban: 'FR76' } });
      expect(await stepUp.revokeGrants({ userRef: 'user-a', now: 2000 })).toBe(1);
      const revocations = 'SELECT user_ref, scope, revoked_at::int AS revoked_at FROM verify_kit_grant_revocations';
      expect((await old.pool.query(revocations)).rows).toEqual([{ user_ref: 'user-a', scope: '', revoked_at: 2000 }]);
    } finally {
      await old.drop();
    }
  });
});
