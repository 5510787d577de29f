/**
 * One integrator app in its own process: `kit` (express + express-session + helmet + the kit) or
 * `baseline` (the same express + express-session + helmet, with a minimal hand-written start and
 * landing). Both use a file SQLite database (WAL, synchronous=NORMAL), or with `databaseUrl` a
 * PostgreSQL database (the kit's PostgreSQL store; the baseline on plain node-postgres), an undici
 * keep-alive Pool to the emulator, a silent logger, and the same action: one INSERT into
 * bench_grants committed with the attempt's mark.
 *
 * The process listens first (port 0) so the orchestrator can register the app's returnUrl with the
 * emulator, then `configure` builds the app.
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import express, { type NextFunction, type Request, type Response } from 'express';
import session from 'express-session';
import helmet from 'helmet';
import pg from 'pg';
import { Pool } from 'undici';
import type { ActionDefinition, VerificationKit, VerifyStore } from '../middleware/index.ts';
import * as thisKit from '../middleware/index.ts';
import * as postgresEntry from '../middleware/store/postgres/postgres.ts';
import * as sqliteEntry from '../middleware/store/sqlite/sqlite.ts';
import {
  ACTION,
  basicAuthorization,
  destinationOf,
  PG_BASELINE_ATTEMPTS_TABLE,
  PG_BASELINE_SEED_ATTEMPTS,
  PG_GRANTS_TABLE,
  PG_INSERT_GRANT,
  PG_SEED_ATTEMPTS,
  seedPostgres,
  SUCCESS_PATH,
  type ConfigureArgs,
  type SeedAttempt,
} from './common.ts';
import { serve } from './ipc.ts';
import { closeServer, listen } from '../test/support/listen.ts';

const mode = process.argv[2];
if (mode !== 'kit' && mode !== 'baseline') throw new Error('usage: app-child.ts kit|baseline');
// BENCH_BASELINE_KIT_DIR=<dir holding another version's middleware/> (e.g. `git archive main middleware`
// unpacked, with node_modules linked): the "baseline" side runs THAT kit, the same way, so two kit versions
// are compared in one interleaved run, under the same load (two separate runs on a shared machine differ
// more than most single changes do).
const otherKitDir = process.env.BENCH_BASELINE_KIT_DIR;
const kitModule: typeof thisKit =
  otherKitDir !== undefined && mode === 'baseline' ? await import(`${otherKitDir}/middleware/index.ts`) : thisKit;
const { createVerificationKit } = kitModule;
// The stores left the package's main entry for `./sqlite` and `./postgres`; an older kit still has them there.
const stores = kitModule as unknown as Partial<typeof sqliteEntry & typeof postgresEntry>;
const createSqliteStore = stores.createSqliteStore ?? sqliteEntry.createSqliteStore;
const createPostgresStore = stores.createPostgresStore ?? postgresEntry.createPostgresStore;

const GENEROUS = { points: 10_000_000, durationSeconds: 3600 };

type SessionData = { user?: string; csrf?: string };
const bag = (req: Request) => req.session as unknown as SessionData;

const server: Server = createServer();
const port = await listen(server);

let db: Database | undefined;
let pgPool: pg.Pool | undefined;
let store: VerifyStore<unknown> | undefined;
let kit: VerificationKit<unknown> | undefined;
let upstream: Pool | undefined;
let seed: (attempts: SeedAttempt[]) => void | Promise<void> = () => {
  throw new Error('not configured');
};
type Counts = { grants: number; fulfilled: number };
let counts: () => Counts | Promise<Counts> = () => ({ grants: 0, fulfilled: 0 });

function baseApp(): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(helmet());
  app.use(
    session({
      name: 'bench_sid',
      secret: randomBytes(16).toString('hex'),
      resave: false,
      saveUninitialized: false,
      cookie: { httpOnly: true, sameSite: 'lax' },
    }),
  );
  return app;
}

function configureKit(args: ConfigureArgs): express.Express {
  if (args.databaseUrl !== undefined) return configureKitPostgres(args);
  const sqlite = createSqliteStore({ database: args.dbPath });
  store = sqlite;
  const kdb = sqlite.db;
  db = kdb;
  kdb.exec(
    'CREATE TABLE IF NOT EXISTS bench_grants (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, user_ref TEXT NOT NULL)',
  );
  const insertGrant = kdb.prepare('INSERT INTO bench_grants (session_id, user_ref) VALUES (?, ?)');
  const actions: ActionDefinition<Database>[] = [
    {
      name: ACTION,
      operationSensitivity: 'normal',
      successPath: SUCCESS_PATH,
      // As the hand-written baseline (and the PostgreSQL bench): no ordering between a user's attempts,
      // whose many seeded attempts would otherwise supersede each other.
      ordering: 'independent',
      fulfil(_tx, attempt) {
        insertGrant.run(attempt.sessionId, attempt.userRef);
      },
    },
  ];
  kit = createVerificationKit<unknown>({
    baseUrl: args.emulatorUrl,
    clientId: args.clientId,
    clientSecret: args.secret,
    returnUrl: args.returnUrl,
    store: sqlite,
    actions: actions as ActionDefinition<unknown>[],
    // The kit's start limits are on by default (SQLite counters per user, destination and IP). Every bench
    // request comes from 127.0.0.1, so the budgets are made generous: the limits are counted, never hit.
    // BENCH_KIT_START_LIMITS=off measures the start without them (dangerouslyDisableStartLimits).
    ...(process.env.BENCH_KIT_START_LIMITS === 'off'
      ? { dangerouslyDisableStartLimits: true }
      : { limits: { perUser: GENEROUS, perDestination: GENEROUS, perIp: GENEROUS } }),
    // Trivial: the session's user; the destination is derived from it.
    resolveUser: (req) => {
      const user = bag(req).user;
      return user === undefined ? null : { userRef: user, destination: destinationOf(user) };
    },
  });
  const s = sqlite;
  seed = (attempts) => {
    const now = Date.now();
    kdb.exec('BEGIN');
    try {
      for (const a of attempts) {
        // insertAttempt runs its statement synchronously; awaiting is not needed inside BEGIN/COMMIT.
        void s.insertAttempt({
          state: a.state,
          sessionId: a.sessionId,
          userRef: a.userRef,
          action: ACTION,
          params: null,
          destination: destinationOf(a.userRef),
          returnTo: SUCCESS_PATH,
          sensitivity: 'normal',
          platform: 'web',
          createdAt: now,
          nextCheckAt: now + 3 * 60_000,
        });
      }
      kdb.exec('COMMIT');
    } catch (error) {
      kdb.exec('ROLLBACK');
      throw error;
    }
  };
  const grants = kdb.prepare('SELECT COUNT(*) AS n FROM bench_grants');
  const fulfilled = kdb.prepare("SELECT COUNT(*) AS n FROM verify_kit_attempts WHERE outcome = 'fulfilled'");
  counts = () => ({ grants: (grants.get() as { n: number }).n, fulfilled: (fulfilled.get() as { n: number }).n });

  return kitApp(kit);
}

function kitApp(k: VerificationKit<unknown>): express.Express {
  const app = baseApp();
  app.post('/bench/login', express.urlencoded({ extended: false }), (req, res) => {
    bag(req).user = String((req.body as { user?: string }).user);
    res.json({ csrf: k.csrfToken(req) });
  });
  app.use(k.router);
  return app;
}

const pgCounts = (pool: pg.Pool, attemptsTable: string) => async (): Promise<Counts> => {
  const { rows } = await pool.query(
    `SELECT (SELECT count(*) FROM bench_grants)::int AS grants,
            (SELECT count(*) FROM ${attemptsTable} WHERE outcome = 'fulfilled')::int AS fulfilled`,
  );
  return rows[0] as Counts;
};

/** The kit on its PostgreSQL store: the same action, awaited on the transaction's client. */
function configureKitPostgres(args: ConfigureArgs): express.Express {
  const pool = new pg.Pool({ connectionString: args.databaseUrl, max: 10 });
  pgPool = pool;
  const pgStore = createPostgresStore({ pool });
  store = pgStore;
  const action: ActionDefinition<pg.PoolClient> = {
    name: ACTION,
    operationSensitivity: 'normal',
    successPath: SUCCESS_PATH,
    // One lander lands thousands of its own verified attempts, several at once; the hand-written
    // baseline applies each one, so the kit does too (with 'latest' a newer one would supersede them).
    ordering: 'independent',
    async fulfil(tx, attempt) {
      await tx.query({ name: 'bench_grant', text: PG_INSERT_GRANT, values: [attempt.sessionId, attempt.userRef] });
    },
  };
  kit = createVerificationKit<unknown>({
    baseUrl: args.emulatorUrl,
    clientId: args.clientId,
    clientSecret: args.secret,
    returnUrl: args.returnUrl,
    store: pgStore as VerifyStore<unknown>,
    actions: [action as ActionDefinition<unknown>],
    limits: { perUser: GENEROUS, perDestination: GENEROUS, perIp: GENEROUS },
    resolveUser: (req) => {
      const user = bag(req).user;
      return user === undefined ? null : { userRef: user, destination: destinationOf(user) };
    },
  });
  const ready = pgStore.ready.then(() => pool.query(PG_GRANTS_TABLE));
  seed = async (attempts) => {
    await ready;
    const now = Date.now();
    await seedPostgres(pool, PG_SEED_ATTEMPTS, attempts, [ACTION, SUCCESS_PATH, now, now + 3 * 60_000]);
  };
  counts = pgCounts(pool, 'verify_kit_attempts');
  return kitApp(kit);
}

function safeEqual(a: string, b: string): boolean {
  const da = createHash('sha256').update(a).digest();
  const db2 = createHash('sha256').update(b).digest();
  return timingSafeEqual(da, db2) && a.length === b.length;
}

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/**
 * What an integrator would write by hand from the spec: start = CSRF token check, fresh state,
 * POST /session with an Idempotency-Key, one INSERT, an auto-submit form page; landing = look up
 * the attempt by state (session_id must match), GET /session, check verified + state + userRef,
 * one IMMEDIATE transaction (conditional mark + the action's INSERT), 303 to the stored path.
 */
function configureBaseline(args: ConfigureArgs): express.Express {
  if (args.databaseUrl !== undefined) return configureBaselinePostgres(args);
  const bdb = new BetterSqlite3(args.dbPath);
  db = bdb;
  bdb.pragma('busy_timeout = 5000');
  bdb.pragma('journal_mode = WAL');
  bdb.pragma('synchronous = NORMAL');
  bdb.exec(`CREATE TABLE IF NOT EXISTS attempts (
      state TEXT PRIMARY KEY, session_id TEXT NOT NULL UNIQUE, user_ref TEXT NOT NULL, action TEXT NOT NULL,
      return_to TEXT NOT NULL, outcome TEXT NOT NULL DEFAULT 'pending', created_at INTEGER NOT NULL, fulfilled_at INTEGER) STRICT;
    CREATE TABLE IF NOT EXISTS bench_grants (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, user_ref TEXT NOT NULL);`);
  const insertAttempt = bdb.prepare(
    'INSERT INTO attempts (state, session_id, user_ref, action, return_to, created_at) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const byState = bdb.prepare('SELECT session_id, user_ref, return_to, outcome FROM attempts WHERE state = ?');
  const mark = bdb.prepare(
    "UPDATE attempts SET outcome = 'fulfilled', fulfilled_at = ? WHERE session_id = ? AND outcome = 'pending'",
  );
  const insertGrant = bdb.prepare('INSERT INTO bench_grants (session_id, user_ref) VALUES (?, ?)');
  const fulfil = bdb.transaction((sessionId: string, userRef: string) => {
    if (mark.run(Date.now(), sessionId).changes === 1) insertGrant.run(sessionId, userRef);
  });
  seed = bdb.transaction((attempts: SeedAttempt[]) => {
    const now = Date.now();
    for (const a of attempts) insertAttempt.run(a.state, a.sessionId, a.userRef, ACTION, SUCCESS_PATH, now);
  });
  const grants = bdb.prepare('SELECT COUNT(*) AS n FROM bench_grants');
  const fulfilled = bdb.prepare("SELECT COUNT(*) AS n FROM attempts WHERE outcome = 'fulfilled'");
  counts = () => ({ grants: (grants.get() as { n: number }).n, fulfilled: (fulfilled.get() as { n: number }).n });

  const pool = new Pool(new URL(args.emulatorUrl).origin, { keepAliveTimeout: 10_000 });
  upstream = pool;
  const authorization = basicAuthorization(args.clientId, args.secret);

  const app = baseApp();
  app.post('/bench/login', express.urlencoded({ extended: false }), (req, res) => {
    const s = bag(req);
    s.user = String((req.body as { user?: string }).user);
    s.csrf ??= randomBytes(32).toString('base64url');
    res.json({ csrf: s.csrf });
  });

  app.post(
    '/verify/start',
    express.urlencoded({ extended: false, limit: '16kb' }),
    async (req: Request, res: Response, next: NextFunction) => {
      try {
        const s = bag(req);
        const body = req.body as Record<string, unknown>;
        if (s.user === undefined) {
          res.status(401).send('sign in');
          return;
        }
        if (typeof s.csrf !== 'string' || typeof body._csrf !== 'string' || !safeEqual(body._csrf, s.csrf)) {
          res.status(403).send('csrf');
          return;
        }
        if (body.action !== ACTION) {
          res.status(400).send('action');
          return;
        }
        const state = randomBytes(32).toString('base64url');
        const answer = await pool.request({
          method: 'POST',
          path: '/session',
          headers: {
            authorization,
            accept: 'application/json',
            'content-type': 'application/json',
            'idempotency-key': randomUUID(),
          },
          body: JSON.stringify({
            returnUrl: args.returnUrl,
            channel: 'sms',
            destination: destinationOf(s.user),
            operationSensitivity: 'normal',
            userRef: s.user,
            state,
            platform: 'web',
          }),
        });
        const created = (await answer.body.json()) as {
          isSuccess?: boolean;
          sessionId?: string;
          verifyUrl?: string;
          handoff?: string;
        };
        if (
          answer.statusCode !== 200 ||
          created.isSuccess !== true ||
          !created.sessionId ||
          !created.verifyUrl ||
          !created.handoff
        ) {
          res.status(502).send('service');
          return;
        }
        insertAttempt.run(state, created.sessionId, s.user, ACTION, SUCCESS_PATH, Date.now());
        const nonce = randomBytes(16).toString('base64');
        res.set('Cache-Control', 'no-store');
        res.set(
          'Content-Security-Policy',
          `default-src 'none'; script-src 'nonce-${nonce}'; form-action ${new URL(created.verifyUrl).origin}`,
        );
        res
          .type('html')
          .send(
            `<!doctype html><title>Continue</title><form method="post" action="${escapeHtml(created.verifyUrl)}"><input type="hidden" name="hx" value="${escapeHtml(created.handoff)}"><button>Continue</button></form><script nonce="${nonce}">document.forms[0].submit()</script>`,
          );
      } catch (error) {
        next(error);
      }
    },
  );

  app.get('/verify/return', async (req: Request, res: Response, next: NextFunction) => {
    try {
      const { session_id: sessionId, state } = req.query;
      if (typeof sessionId !== 'string' || typeof state !== 'string') {
        res.status(400).send('bad link');
        return;
      }
      const row = byState.get(state) as
        { session_id: string; user_ref: string; return_to: string; outcome: string } | undefined;
      if (row === undefined || row.session_id !== sessionId) {
        res.status(400).send('unknown');
        return;
      }
      if (row.outcome === 'pending') {
        const answer = await pool.request({
          method: 'GET',
          path: `/session/${encodeURIComponent(sessionId)}`,
          headers: { authorization, accept: 'application/json' },
        });
        const status = (await answer.body.json()) as { status?: string; state?: string; userRef?: string };
        if (answer.statusCode !== 200) {
          res.status(502).send('service');
          return;
        }
        if (status.status !== 'verified' || status.state !== state || status.userRef !== row.user_ref) {
          res.status(200).type('html').send('<!doctype html><title>Pending</title><p>Not verified (yet).</p>');
          return;
        }
        fulfil.immediate(sessionId, row.user_ref);
      }
      if (bag(req).user !== row.user_ref) {
        res.type('html').send('<!doctype html><title>Done</title><p>Done.</p>');
        return;
      }
      res.set('Cache-Control', 'no-store');
      res.redirect(303, row.return_to);
    } catch (error) {
      next(error);
    }
  });
  return app;
}

/**
 * The hand-written landing on plain node-postgres, what an integrator would write from the spec:
 * look the attempt up by state, GET /session, check verified + state + userRef, then on one pooled
 * client BEGIN, the conditional mark, the action's INSERT when the mark took, COMMIT; 303.
 */
function configureBaselinePostgres(args: ConfigureArgs): express.Express {
  const pool = new pg.Pool({ connectionString: args.databaseUrl, max: 10 });
  pgPool = pool;
  const ready = pool.query(`${PG_BASELINE_ATTEMPTS_TABLE}; ${PG_GRANTS_TABLE};`);
  seed = async (attempts) => {
    await ready;
    await seedPostgres(pool, PG_BASELINE_SEED_ATTEMPTS, attempts, [ACTION, SUCCESS_PATH, Date.now()]);
  };
  counts = pgCounts(pool, 'attempts');
  const undiciPool = new Pool(new URL(args.emulatorUrl).origin, { keepAliveTimeout: 10_000 });
  upstream = undiciPool;
  const authorization = basicAuthorization(args.clientId, args.secret);

  const app = baseApp();
  app.post('/bench/login', express.urlencoded({ extended: false }), (req, res) => {
    bag(req).user = String((req.body as { user?: string }).user);
    res.json({ csrf: 'unused' });
  });
  app.get('/verify/return', async (req: Request, res: Response, next: NextFunction) => {
    try {
      const { session_id: sessionId, state } = req.query;
      if (typeof sessionId !== 'string' || typeof state !== 'string') {
        res.status(400).send('bad link');
        return;
      }
      const { rows } = await pool.query<{ session_id: string; user_ref: string; return_to: string; outcome: string }>({
        name: 'by_state',
        text: 'SELECT session_id, user_ref, return_to, outcome FROM attempts WHERE state = $1',
        values: [state],
      });
      const row = rows[0];
      if (row === undefined || row.session_id !== sessionId) {
        res.status(400).send('unknown');
        return;
      }
      if (row.outcome === 'pending') {
        const answer = await undiciPool.request({
          method: 'GET',
          path: `/session/${encodeURIComponent(sessionId)}`,
          headers: { authorization, accept: 'application/json' },
        });
        const status = (await answer.body.json()) as { status?: string; state?: string; userRef?: string };
        if (answer.statusCode !== 200) {
          res.status(502).send('service');
          return;
        }
        if (status.status !== 'verified' || status.state !== state || status.userRef !== row.user_ref) {
          res.status(200).type('html').send('<!doctype html><title>Pending</title><p>Not verified (yet).</p>');
          return;
        }
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          const marked = await client.query({
            name: 'mark',
            text: `UPDATE attempts SET outcome = 'fulfilled', fulfilled_at = $1
              WHERE session_id = $2 AND outcome = 'pending'`,
            values: [Date.now(), sessionId],
          });
          if (marked.rowCount === 1) {
            await client.query({ name: 'grant', text: PG_INSERT_GRANT, values: [sessionId, row.user_ref] });
          }
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK').catch(() => {});
          throw error;
        } finally {
          client.release();
        }
      }
      if (bag(req).user !== row.user_ref) {
        res.type('html').send('<!doctype html><title>Done</title><p>Done.</p>');
        return;
      }
      res.set('Cache-Control', 'no-store');
      res.redirect(303, row.return_to);
    } catch (error) {
      next(error);
    }
  });
  return app;
}

serve(
  {
    port: () => ({ port }),
    configure(args: ConfigureArgs) {
      const app = mode === 'kit' || otherKitDir !== undefined ? configureKit(args) : configureBaseline(args);
      app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
        res.status(500).send(error instanceof Error ? error.name : 'error');
      });
      server.on('request', app);
      return { ok: true };
    },
    async seed(args: { attempts: SeedAttempt[] }) {
      await seed(args.attempts);
      return { inserted: args.attempts.length };
    },
    counts: () => counts(),
    cpu: () => process.cpuUsage(),
    memory: () => process.memoryUsage(),
  },
  async () => {
    await closeServer(server);
    await kit?.close();
    await upstream?.close();
    await store?.close();
    await pgPool?.end();
    if (db?.open) db.close();
  },
);
