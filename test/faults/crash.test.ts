/**
 * Crash test, on each store: the app PROCESS (test/fixtures/crash-app.ts, the kit on a SQLite file
 * or a PostgreSQL database) is killed with SIGKILL while it is inside the fulfilment transaction
 * (its action has written the effect row and blocks), then restarted. The database must be intact,
 * the half-done fulfilment must have left no trace, and the next landing (or the sweep) must
 * fulfil exactly once, with the attempt row and the effect row agreeing. Also killed AFTER the
 * commit, inside the onOutcome hook: the outcome stays, and the sweep delivers its event.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import type pg from 'pg';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { OutcomeEvent } from '../../middleware/index.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import { createVerifyClient } from '../../middleware/client/client.ts';
import { useTestEmulator } from '../support/emulator.ts';
import { waitFor } from '../support/wait-for.ts';
import { freePort } from '../support/listen.ts';
import { createTestDatabase, type TestDatabase } from '../support/postgres.ts';
import { describeEachStore, openStoreFromSpec, type StoreKindName } from '../support/stores.ts';
import { Agent, testAppSite } from '../support/agent.ts';

const FIXTURE = new URL('../fixtures/crash-app.ts', import.meta.url).pathname;
const CLIENT_ID = 'crash-client';
const CLIENT_SECRET = 'crash-secret-0123456789abcdef';

let dir: string;
let port: number;
const children: ChildProcess[] = [];
const databases: TestDatabase[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'crash-'));
  port = await freePort();
});
const emulator = useTestEmulator(() => ({
  clients: [{ clientId: CLIENT_ID, secret: CLIENT_SECRET, returnUrl: `http://localhost:${port}/verify/return` }],
}));
afterEach(() => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});
afterAll(async () => {
  for (const database of databases.splice(0)) await database.drop();
  rmSync(dir, { recursive: true, force: true });
});

/** Starts the app process; resolves once it listens. */
async function startApp(
  db: Db,
  blockFlag?: string,
  hookBlockFlag?: string,
): Promise<{ child: ChildProcess; url: string; exited: Promise<NodeJS.Signals | number | null> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE], {
    env: {
      PATH: process.env.PATH ?? '',
      PORT: String(port),
      ...(db.kind === 'sqlite' ? { DB: db.path } : { DATABASE_URL: db.url }),
      BASE_URL: emulator.url,
      CLIENT_ID,
      CLIENT_SECRET,
      ...(blockFlag === undefined ? {} : { BLOCK_FLAG: blockFlag }),
      ...(hookBlockFlag === undefined ? {} : { HOOK_BLOCK_FLAG: hookBlockFlag }),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.on('exit', (code, signal) => resolve(signal ?? code)),
  );
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`app did not start: ${stderr}`)), 20_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('{"ready"'));
      if (line !== undefined) {
        clearTimeout(timer);
        resolve((JSON.parse(line) as { ready: string }).ready);
      }
    });
    child.on('exit', () => {
      clearTimeout(timer);
      reject(new Error(`app exited early: ${stderr}`));
    });
  });
  return { child, url, exited };
}

/** The app's database: a SQLite file, or a scratch PostgreSQL database. */
type Db =
  | { kind: 'sqlite'; path: string; spec: string }
  | { kind: 'postgres'; url: string; spec: string; database: TestDatabase };

async function newDatabase(kind: StoreKindName, name: string): Promise<Db> {
  if (kind === 'sqlite') {
    const path = join(dir, `${name}.sqlite`);
    return { kind, path, spec: `sqlite:${path}` };
  }
  const database = await createTestDatabase({ max: 2 });
  databases.push(database);
  return { kind, url: database.url, spec: `postgres:${database.url}`, database };
}

/** Rows of one query on the app's database (`$1`-style parameters on both). */
async function queryRows<T>(db: Db, sql: string, params: unknown[]): Promise<T[]> {
  if (db.kind === 'postgres') return (await db.database.pool.query(sql, params)).rows as T[];
  const sqlite = new BetterSqlite3(db.path, { readonly: true });
  try {
    return sqlite.prepare(sql.replace(/\$\d+/g, '?')).all(...params) as T[];
  } finally {
    sqlite.close();
  }
}

interface Inspection {
  /** SQLite's integrity check; on PostgreSQL, 'ok' when the server answers (it recovers on its own). */
  integrity: unknown;
  attempt: { outcome: string; fulfilled_at: number | null; state: string; user_ref: string } | undefined;
  effects: { session_id: string; state: string; user_ref: string }[];
  allEffects: number;
}

/**
 * Raw SQL on purpose: right after a kill it reads the file or database as the killed process left
 * it, without opening a store (a store migrates its schema as it opens), with SQLite's integrity check.
 */
async function inspect(db: Db, sessionId: string): Promise<Inspection> {
  const attemptSql = 'SELECT outcome, fulfilled_at, state, user_ref FROM verify_kit_attempts WHERE session_id = $1';
  const effectsSql = 'SELECT session_id, state, user_ref FROM test_effects WHERE session_id = $1';
  if (db.kind === 'postgres') {
    const q = db.database.pool;
    const attempt = (await q.query(attemptSql, [sessionId])).rows[0] as Inspection['attempt'];
    return {
      integrity: (await q.query('SELECT 1 AS ok')).rows[0]?.ok === 1 ? 'ok' : 'unreachable',
      attempt:
        attempt === undefined
          ? undefined
          : { ...attempt, fulfilled_at: attempt.fulfilled_at === null ? null : Number(attempt.fulfilled_at) },
      effects: (await q.query(effectsSql, [sessionId])).rows,
      allEffects: Number((await q.query('SELECT COUNT(*) AS n FROM test_effects')).rows[0].n),
    };
  }
  const sqlite = new BetterSqlite3(db.path, { readonly: false });
  try {
    return {
      integrity: sqlite.pragma('integrity_check', { simple: true }),
      attempt: sqlite.prepare(attemptSql.replace('$1', '?')).get(sessionId) as Inspection['attempt'],
      effects: sqlite.prepare(effectsSql.replace('$1', '?')).all(sessionId) as Inspection['effects'],
      allEffects: (sqlite.prepare('SELECT COUNT(*) AS n FROM test_effects').get() as { n: number }).n,
    };
  } finally {
    sqlite.close();
  }
}

/** The newest attempt the app stored (the one just started), read through a store on the same database. */
async function newestAttempt(db: Db): Promise<{ sessionId: string; state: string }> {
  const { store } = await openStoreFromSpec(db.spec);
  try {
    const [newest] = await store.listAttempts({ limit: 1 });
    if (newest === undefined) throw new Error('no attempt stored');
    return newest;
  } finally {
    await store.close();
  }
}

/** Starts an attempt through the app and completes it as verified on the service. */
async function verifiedAttempt(url: string, db: Db, user: string) {
  const agent = await new Agent(testAppSite(url)).signIn(user);
  const started = await agent.tryStart('grant');
  expect(started.status).toBe(200);
  const row = await newestAttempt(db);
  expect((await emulator.control.complete(row.sessionId, { outcome: 'verified' })).status).toBe(200);
  return { agent, sessionId: row.sessionId, state: row.state };
}

describeEachStore('SIGKILL inside the fulfilment transaction', (kind) => {
  it(
    'killed mid-fulfil by the landing, restarted: integrity ok, no trace of the half-done effect, then exactly ' +
      'one fulfilment by the next landing',
    async () => {
      const db = await newDatabase(kind.name, 'landing');
      const flag = join(dir, `${kind.name}-landing.block`);
      const first = await startApp(db, flag);
      const { agent, sessionId, state } = await verifiedAttempt(first.url, db, 'alice');

      writeFileSync(flag, '1');
      const landing = agent.landFor(sessionId, state, {}, 30_000).then(
        (answer) => answer,
        (error: unknown) => error,
      );
      await waitFor(() => existsSync(`${flag}.inside`), 15_000, 'the app to be inside the fulfilment transaction');
      first.child.kill('SIGKILL');
      expect(await first.exited).toBe('SIGKILL');
      expect(await landing).toBeInstanceOf(Error); // the connection died with the process

      const afterCrash = await inspect(db, sessionId);
      expect(afterCrash.integrity).toBe('ok');
      expect(afterCrash.attempt?.outcome).toBe('pending');
      expect(afterCrash.attempt?.fulfilled_at).toBeNull();
      expect(afterCrash.effects).toEqual([]); // the effect row written inside the transaction rolled back

      rmSync(flag);
      rmSync(`${flag}.inside`);
      const second = await startApp(db);
      const again = await agent.landFor(sessionId, state);
      expect(again.status).toBe(200); // the session cookie died with the first process: neutral page
      const reload = await agent.landFor(sessionId, state);
      expect(reload.status).toBe(200);
      second.child.kill('SIGTERM');
      await second.exited;

      const end = await inspect(db, sessionId);
      expect(end.integrity).toBe('ok');
      expect(end.attempt?.outcome).toBe('fulfilled');
      expect(end.attempt?.fulfilled_at).toEqual(expect.any(Number));
      expect(end.effects).toEqual([
        { session_id: sessionId, state: end.attempt!.state, user_ref: end.attempt!.user_ref },
      ]);
      expect(end.allEffects).toBe(1);
    },
  );

  it('killed mid-fulfil, never landed again: the sweep after the restart fulfils it exactly once', async () => {
    const db = await newDatabase(kind.name, 'sweep');
    const flag = join(dir, `${kind.name}-sweep.block`);
    const first = await startApp(db, flag);
    const { agent, sessionId, state } = await verifiedAttempt(first.url, db, 'bob');
    writeFileSync(flag, '1');
    const landing = agent.landFor(sessionId, state, {}, 30_000).catch((error: unknown) => error);
    await waitFor(() => existsSync(`${flag}.inside`), 15_000, 'the app to be inside the fulfilment transaction');
    first.child.kill('SIGKILL');
    await first.exited;
    await landing;
    const afterCrash = await inspect(db, sessionId);
    expect(afterCrash).toMatchObject({ integrity: 'ok', effects: [], attempt: { outcome: 'pending' } });

    // The restarted deployment's sweep (same file, same action) finishes the attempt.
    const second = await startApp(db);
    const { store } = await openStoreFromSpec(db.spec);
    const client = createVerifyClient({ baseUrl: emulator.url, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
    try {
      const insert =
        "INSERT INTO test_effects (session_id, state, user_ref, detail, at) VALUES ($1, $2, $3, 'grant', $4)";
      const grant = {
        name: 'grant',
        operationSensitivity: 'sensitive' as const,
        successPath: '/done',
        fulfil:
          kind.name === 'sqlite'
            ? (tx: unknown, a: { sessionId: string; state: string; userRef: string }) =>
                void (tx as BetterSqlite3.Database)
                  .prepare(insert.replace(/\$\d/g, '?'))
                  .run(a.sessionId, a.state, a.userRef, Date.now())
            : async (tx: unknown, a: { sessionId: string; state: string; userRef: string }) =>
                void (await (tx as pg.PoolClient).query(insert, [a.sessionId, a.state, a.userRef, Date.now()])),
      };
      const deps = { client, store, actions: new Map([['grant', grant]]), now: () => Date.now() + 10 * 60_000 };
      const report = await runSweep(deps, { owner: 'after-crash' });
      expect(report.fulfilled).toBe(1);
      expect((await runSweep(deps, { owner: 'after-crash-2' })).fulfilled).toBe(0);
      // A late landing on the restarted app changes nothing.
      expect((await agent.landFor(sessionId, state)).status).toBe(200);
    } finally {
      await client.close();
      await store.close();
      second.child.kill('SIGTERM');
      await second.exited;
    }
    const end = await inspect(db, sessionId);
    expect(end.integrity).toBe('ok');
    expect(end.attempt?.outcome).toBe('fulfilled');
    expect(end.effects).toHaveLength(1);
    expect(end.allEffects).toBe(1);
  });
});

describeEachStore('SIGKILL between the commit and the onOutcome hook', (kind) => {
  it('the fulfilment stays committed, the user already had the redirect, and the sweep delivers the event once', async () => {
    const db = await newDatabase(kind.name, 'hook');
    const flag = join(dir, `${kind.name}-hook.block`);
    const app = await startApp(db, undefined, flag);
    const { agent, sessionId, state } = await verifiedAttempt(app.url, db, 'carol');
    writeFileSync(flag, '1');
    const landing = await agent.landFor(sessionId, state);
    expect(landing.status).toBe(303); // the redirect went out before the hook ran
    await waitFor(() => existsSync(`${flag}.inside`), 15_000, 'the app to be inside the onOutcome hook');
    app.child.kill('SIGKILL');
    expect(await app.exited).toBe('SIGKILL');

    const afterCrash = await inspect(db, sessionId);
    expect(afterCrash).toMatchObject({ integrity: 'ok', attempt: { outcome: 'fulfilled' } });
    expect(afterCrash.effects).toHaveLength(1);

    // A sweep with the same hook, once the dead process's lease has lapsed (virtual clock).
    const { store } = await openStoreFromSpec(db.spec);
    // SQL: the store reads outcome events only by claiming them (a lease), which would change what is checked.
    const eventRow = async () => {
      const [row] = await queryRows<{ outcome: string; source: string; deliveredAt: string | number | null }>(
        db,
        'SELECT outcome, source, delivered_at AS "deliveredAt" FROM verify_kit_outcome_events WHERE session_id = $1',
        [sessionId],
      );
      if (row === undefined) return undefined;
      return { ...row, deliveredAt: row.deliveredAt === null ? null : Number(row.deliveredAt) };
    };
    expect(await eventRow()).toEqual({ outcome: 'fulfilled', source: 'landing', deliveredAt: null });
    const client = createVerifyClient({ baseUrl: emulator.url, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
    const delivered: OutcomeEvent[] = [];
    try {
      const deps = {
        client,
        store,
        actions: new Map(),
        now: () => Date.now() + 5 * 60_000,
        onOutcome: (event: OutcomeEvent) => void delivered.push(event),
      };
      expect((await runSweep(deps, { owner: 'after-hook-crash' })).outcomesDelivered).toBe(1);
      expect((await runSweep(deps, { owner: 'after-hook-crash-2' })).outcomesDelivered).toBe(0);
    } finally {
      await client.close();
      await store.close();
    }
    const redelivered = expect.objectContaining({ sessionId, outcome: 'fulfilled', source: 'landing', delivery: 2 });
    expect(delivered).toEqual([redelivered]);
    expect(await eventRow()).toMatchObject({ deliveredAt: expect.any(Number) });
    expect((await inspect(db, sessionId)).allEffects).toBe(1);
  });
});
