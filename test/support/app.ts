/**
 * The one integrator app of the kit's suites, driven by options: express + express-session +
 * helmet() defaults + the kit, listening first (port 0 unless told) so the service can register
 * `<url>/verify/return`. Its actions write one row per fulfilment into `test_effects`, inside the
 * kit's transaction, deliberately with no unique constraint, so a second fulfilment would show as a
 * second row:
 * - `grant_badge` (normal, ordering 'independent': two tabs, two badges), `set_note` (sensitive,
 *   its params from `prepare`, checked again on a restart) and `grant` (sensitive, 'latest').
 *
 * Options choose the database (in-memory SQLite by default, a SQLite file, or PostgreSQL), the
 * service (by default an emulator of its own with a fresh client for this app), a mobile app
 * backend instead of a web app, or a mobile kit beside the web one, the client's timeouts and
 * retry, and any kit option (merged last).
 *
 * Crash support: when `blockFlag` names an existing file, a fulfilment writes its effect row, then
 * writes `blockFlag + '.inside'` and blocks the thread (inside the kit's open transaction) until
 * killed. When `hookBlockFlag` names an existing file, the onOutcome hook (after commit) does the
 * same: the crash between commit and hook.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import express, { type NextFunction, type Request, type Response } from 'express';
import session from 'express-session';
import helmet from 'helmet';
import pg from 'pg';
import {
  createVerificationKit,
  createVerifyClient,
  KitError,
  KitErrorCode,
  type ActionDefinition,
  type ClientSettings,
  type OutcomeEvent,
  type VerificationKit,
  type VerificationKitOptions,
  type VerifyClient,
  type VerifiedAttempt,
  type VerifyStore,
} from '../../middleware/index.ts';
import { createPostgresStore } from '../../middleware/store/postgres/postgres.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import type { AttemptRecord } from '../../middleware/store/types.ts';
import { Agent, testAppSite, type Site } from './agent.ts';
import { startTestEmulator, type TestEmulator } from './emulator.ts';
import { createTestClock, type TestClock } from './clock.ts';
import { GENEROUS_START_LIMITS } from './limits.ts';
import { closeServer, listen } from './listen.ts';
import { newSeen, recordInto, type Seen } from './seen.ts';
import { USERS, userNamed } from './users.ts';

/** Where the app sends its users and with which client registration. */
export interface ServiceRegistration {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
}

export interface TestAppOptions {
  /** A SQLite file, or a PostgreSQL connection string; default an in-memory SQLite database. */
  database?: { path: string } | { url: string };
  /** Port to listen on (0 = any). */
  port?: number;
  /** The address users reach the app at, when not its own (instances behind one load balancer). */
  publicUrl?: string;
  /** Given the app's returnUrl, starts (or names) the service; default an emulator of the app's own. */
  service?: (returnUrl: string) => Promise<ServiceRegistration>;
  /** The app is a mobile app's backend: this deep link is its return URL, the user comes in `x-test-user`. */
  mobileReturnUrl?: string;
  /**
   * Also mount a mobile kit (deep link MOBILE_RETURN_URL) on the same store and actions, as an
   * integrator with a web and an app client would: start at /m/verify/start (JSON), completion at
   * /verify/mobile/complete. Same service base URL, its own client registration.
   */
  mobileKit?: { clientId: string; clientSecret: string };
  /** The client's timeouts and retry (retry defaults to short delays: 50 to 300 ms). */
  client?: ClientSettings;
  /** Wraps the real client (e.g. to alter the echo the service gives). */
  wrapClient?: (client: VerifyClient) => VerifyClient;
  /** Wraps the real store the kit is given (e.g. a custom store's odd answers); `store` stays the real one. */
  wrapStore?: (store: VerifyStore<unknown>) => VerifyStore<unknown>;
  /** See the file comment. */
  blockFlag?: string;
  /** See the file comment. */
  hookBlockFlag?: string;
  /** Any other kit option, merged last (`limits: undefined` restores the kit's default limits). */
  kit?: Partial<VerificationKitOptions<unknown>>;
  /** A session store and secret shared with other instances (behind one address); default the app's own. */
  session?: { store: session.Store; secret: string };
  /** The integrator's own routes (step-up guarded ones), mounted after the session, before the kit. */
  ownRoutes?: (app: express.Express, kit: VerificationKit<unknown>) => void;
}

export const MOBILE_RETURN_URL = 'com.example.fixture://verify/return';

/**
 * Two quick re-checks of a pending landing before its page, then a page that refreshes every 2 s.
 * Re-checks this quick would find the kit's reused `pending` answer: no reuse here
 * (test/kit/landing-flood.test.ts runs the defaults).
 */
const LANDING = {
  pendingRechecks: 2,
  pendingRecheckIntervalMs: 150,
  refreshSeconds: 2,
  refreshWindowMs: 60_000,
  pendingReuseMs: 0,
};

/** For suites that time the landing (faults, crashes): a pending status gets its page at once. */
export const NO_PENDING_RECHECKS = { ...LANDING, pendingRechecks: 0, pendingRecheckIntervalMs: 0 };

export interface TestApp {
  /** http://localhost:<port> */
  url: string;
  returnUrl: string;
  clientId: string;
  secret: string;
  /** The app's own emulator (throws when the app was given a `service`). */
  emulator: TestEmulator;
  kit: VerificationKit<unknown>;
  mobileKit: VerificationKit<unknown> | undefined;
  /** The kits' clock (their `now`): start attempts in the past with `clock.shifted`, no SQL. */
  clock: TestClock;
  /** The kit's store: tests read attempts through its interface, not SQL. */
  store: VerifyStore<unknown>;
  kind: 'sqlite' | 'postgres';
  /** The SQLite handle (throws on PostgreSQL: use query). */
  db: Database;
  /** Rows of one statement on the app's database, on either store (`$1`-style parameters). */
  query<T>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Every log line the kit wrote (JSON). */
  logs: string[];
  /** Every URL the app received. */
  requestUrls: string[];
  /** Every error that reached the app's Express error handler (message, code, own properties). */
  errors: string[];
  /** The app as the scripted agent sees it (sign-in by name, newest attempt, the emulator's outbox). */
  site: Site;
  /** A new agent on the app whose URLs, Locations and handoffs go to `seen` (the leak checks). */
  agent(seen?: Seen): Agent;
  /** Effect rows the actions wrote for a session (SQLite). */
  grants(sessionId: string): number;
  allGrants(): number;
  attempt(sessionId: string): Promise<AttemptRecord | undefined>;
  latestAttempt(): Promise<AttemptRecord>;
  attemptCount(): Promise<number>;
  close(): Promise<void>;
}

const EFFECTS_TABLE = `CREATE TABLE IF NOT EXISTS test_effects (
  id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, state TEXT NOT NULL, user_ref TEXT NOT NULL,
  detail TEXT NOT NULL, at INTEGER NOT NULL)`;
const EFFECTS_TABLE_POSTGRES = `CREATE TABLE IF NOT EXISTS test_effects (
  id BIGSERIAL PRIMARY KEY, session_id TEXT NOT NULL, state TEXT NOT NULL, user_ref TEXT NOT NULL,
  detail TEXT NOT NULL, at BIGINT NOT NULL)`;
const INSERT_EFFECT = 'INSERT INTO test_effects (session_id, state, user_ref, detail, at) VALUES ($1, $2, $3, $4, $5)';

interface AppDatabase {
  kind: 'sqlite' | 'postgres';
  store: VerifyStore<unknown>;
  db: Database | undefined;
  query<T>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Writes an effect row with the store's transaction handle. */
  writeEffect(tx: unknown, values: unknown[]): void | Promise<void>;
  close(): Promise<void>;
}

async function openDatabase(database: TestAppOptions['database']): Promise<AppDatabase> {
  if (database !== undefined && 'url' in database) {
    const pool = new pg.Pool({ connectionString: database.url, max: 10 });
    pool.on('error', () => {}); // an idle connection dropped by the server is replaced on next use
    const store = createPostgresStore({ pool });
    await store.ready;
    // Several app processes start at once: create the effects table under one lock.
    await pool.query(`BEGIN; SELECT pg_advisory_xact_lock(4242); ${EFFECTS_TABLE_POSTGRES}; COMMIT`);
    return {
      kind: 'postgres',
      store,
      db: undefined,
      query: async <T>(sql: string, params: unknown[] = []) => (await pool.query(sql, params)).rows as T[],
      writeEffect: async (tx, values) => void (await (tx as pg.PoolClient).query(INSERT_EFFECT, values)),
      close: async () => {
        await store.close();
        await pool.end();
      },
    };
  }
  const db = new BetterSqlite3(database?.path ?? ':memory:');
  db.pragma('busy_timeout = 5000');
  db.pragma('journal_mode = WAL');
  db.exec(EFFECTS_TABLE);
  const store = createSqliteStore({ database: db });
  return {
    kind: 'sqlite',
    store,
    db,
    query: async <T>(sql: string, params: unknown[] = []) =>
      db.prepare(sql.replace(/\$\d+/g, '?')).all(...params) as T[],
    writeEffect: (tx, values) => void (tx as Database).prepare(INSERT_EFFECT.replace(/\$\d+/g, '?')).run(...values),
    close: async () => {
      await store.close();
      if (db.open) db.close();
    },
  };
}

/** Blocks this thread until the process is killed (bounded), after saying where it stopped. */
function blockUntilKilled(flag: string, sessionId: string): never {
  writeFileSync(`${flag}.inside`, sessionId);
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000);
  throw new Error('the crash fixture was not killed within 60 s');
}

function testActions(database: AppDatabase, blockFlag: string | undefined): ActionDefinition<unknown>[] {
  const write = (tx: unknown, attempt: VerifiedAttempt, detail: string) =>
    database.writeEffect(tx, [attempt.sessionId, attempt.state, attempt.userRef, detail, Date.now()]);
  const block = (attempt: VerifiedAttempt) => {
    if (blockFlag !== undefined && existsSync(blockFlag)) blockUntilKilled(blockFlag, attempt.sessionId);
  };
  // Synchronous on SQLite (its transaction is), awaited queries on PostgreSQL.
  const effect = (detail: (attempt: VerifiedAttempt) => string): ActionDefinition<unknown>['fulfil'] =>
    database.kind === 'sqlite'
      ? (tx, attempt) => {
          void write(tx, attempt, detail(attempt));
          block(attempt);
        }
      : async (tx, attempt) => {
          await write(tx, attempt, detail(attempt));
          block(attempt);
        };
  return [
    {
      name: 'grant_badge',
      operationSensitivity: 'normal',
      successPath: '/done/badge',
      // Every verified badge grant applies (two tabs, two badges); the others keep the default 'latest'.
      ordering: 'independent',
      fulfil: effect(() => 'badge'),
    },
    {
      name: 'set_note',
      operationSensitivity: 'sensitive',
      successPath: '/done/note',
      prepare(req, { restartParams }) {
        // A restart validates the earlier attempt's note again instead of reading the form.
        const given = (restartParams ?? req.body) as Record<string, unknown>;
        const note = given.note;
        if (typeof note !== 'string' || !/^[a-z ]{1,40}$/.test(note)) {
          throw new KitError(KitErrorCode.InvalidActionParams, 'Enter a note of 1 to 40 lowercase letters.');
        }
        return { note };
      },
      fulfil: effect((attempt) => `note:${(attempt.params as { note: string }).note}`),
    },
    { name: 'grant', operationSensitivity: 'sensitive', successPath: '/done', fulfil: effect(() => 'grant') },
  ];
}

/** The service by default: an emulator of the app's own, with a fresh client registered for the return URL. */
async function ownEmulator(returnUrl: string, port: number, mobile: boolean) {
  const clientId = `kit-test-${port}`;
  const clientSecret = `kit-secret-${randomBytes(16).toString('hex')}`;
  const emulator = await startTestEmulator({
    clients: [{ clientId, secret: clientSecret, returnUrl, platform: mobile ? 'mobile' : 'web' }],
  });
  return { emulator, registration: { baseUrl: emulator.url, clientId, clientSecret } };
}

export function describeError(error: unknown): string {
  if (error instanceof Error) {
    return JSON.stringify({
      ...error,
      message: error.message,
      stack: error.stack,
      cause: String((error as { cause?: unknown }).cause),
    });
  }
  return String(error);
}

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const server = createServer();
  const port = await listen(server, { port: options.port ?? 0 });
  const url = `http://localhost:${port}`;
  const mobile = options.mobileReturnUrl !== undefined;
  // Several instances behind one address share the one registered return URL.
  const returnUrl = options.mobileReturnUrl ?? `${options.publicUrl ?? url}/verify/return`;
  const own = options.service === undefined ? await ownEmulator(returnUrl, port, mobile) : undefined;
  const service = own?.registration ?? (await options.service!(returnUrl));

  const database = await openDatabase(options.database);
  const { store } = database;
  const actions = testActions(database, options.blockFlag);
  const logs: string[] = [];
  const line = (level: string) => (obj: Record<string, unknown>, msg: string) =>
    logs.push(JSON.stringify({ level, ...obj, msg }));
  const logger = { info: line('info'), warn: line('warn'), error: line('error') };
  const clients: VerifyClient[] = [];
  const clientFor = (registration: Omit<ServiceRegistration, 'baseUrl'>) => {
    const client = createVerifyClient({
      baseUrl: service.baseUrl,
      clientId: registration.clientId,
      clientSecret: registration.clientSecret,
      ...(options.client?.timeouts === undefined ? {} : { timeouts: options.client.timeouts }),
      retry: { baseDelayMs: 50, maxDelayMs: 300, ...options.client?.retry },
    });
    clients.push(client);
    return client;
  };
  const realClient = clientFor(service);
  const hookBlockFlag = options.hookBlockFlag;
  const onOutcome =
    hookBlockFlag === undefined
      ? undefined
      : (event: OutcomeEvent) => {
          if (existsSync(hookBlockFlag)) blockUntilKilled(hookBlockFlag, event.sessionId);
        };
  const resolveUser = (req: Request) => {
    const name = mobile ? req.get('x-test-user') : (req.session as { user?: string }).user;
    return name === undefined ? null : (USERS[name] ?? userNamed(name));
  };
  const clock = createTestClock();
  const kit = createVerificationKit<unknown>({
    now: clock.now,
    baseUrl: service.baseUrl,
    clientId: service.clientId,
    clientSecret: service.clientSecret,
    returnUrl,
    platform: mobile ? 'mobile' : 'web',
    store: options.wrapStore ? options.wrapStore(store) : store,
    actions,
    client: options.wrapClient ? options.wrapClient(realClient) : realClient,
    resolveUser,
    logger,
    landing: LANDING,
    limits: GENEROUS_START_LIMITS,
    ...(onOutcome === undefined ? {} : { onOutcome }),
    ...options.kit,
  });
  const mobileKit =
    options.mobileKit === undefined
      ? undefined
      : createVerificationKit<unknown>({
          now: clock.now,
          baseUrl: service.baseUrl,
          clientId: options.mobileKit.clientId,
          clientSecret: options.mobileKit.clientSecret,
          returnUrl: MOBILE_RETURN_URL,
          platform: 'mobile',
          routes: { start: '/m/verify/start' },
          store,
          actions,
          resolveUser,
          client: clientFor(options.mobileKit),
          logger,
          landing: options.kit?.landing ?? LANDING,
          limits: GENEROUS_START_LIMITS,
        });

  const requestUrls: string[] = [];
  const errors: string[] = [];
  const app = express();
  app.use((req, _res, next) => {
    requestUrls.push(req.originalUrl);
    next();
  });
  app.use(helmet());
  app.use(
    session({
      name: 'test_app_sid',
      secret: options.session?.secret ?? randomBytes(16).toString('hex'),
      ...(options.session === undefined ? {} : { store: options.session.store }),
      resave: false,
      saveUninitialized: false,
      cookie: { httpOnly: true, sameSite: 'lax' },
    }),
  );
  app.post('/test/login', express.urlencoded({ extended: false }), (req, res) => {
    (req.session as { user?: string }).user = String((req.body as { user?: string }).user);
    res.json({ csrf: kit.csrfToken(req) });
  });
  app.post('/test/logout', (req, res) => {
    (req.session as { user?: string }).user = undefined;
    res.json({ ok: true });
  });
  // The success page's one-time flash, as an integrator's successPath page reads it.
  app.get('/test/landed', (req, res) => {
    res.json({ landed: kit.attempts.takeLanded(req) ?? null });
  });
  app.get('/test/csrf', (req, res) => {
    res.json({ csrf: kit.csrfToken(req) });
  });
  // The integrator's own page with the start form (for the browser test), under helmet's defaults.
  app.get('/form', (req, res) => {
    res.type('html').send(`<!doctype html><html><head><title>Form</title></head><body>
<form method="post" action="/verify/start"><input type="hidden" name="_csrf" value="${kit.csrfToken(req)}">
<input type="hidden" name="action" value="grant_badge"><button id="go" type="submit">Verify</button></form></body></html>`);
  });
  app.get('/done', (_req, res) => {
    res.type('text').send('done');
  });
  app.get('/done/:what', (req, res) => {
    res.type('html').send(`<!doctype html><title>Done</title><h1 id="done">done ${req.params.what}</h1>`);
  });
  options.ownRoutes?.(app, kit);
  app.use(kit.router);
  if (mobileKit !== undefined) app.use(mobileKit.router);
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    errors.push(describeError(error));
    const status = (error as { status?: number }).status ?? 500;
    res.status(status).json({ error: (error as { code?: string }).code ?? 'internal' });
  });
  server.on('request', app);

  const sqlite = (): Database => {
    if (database.db === undefined) throw new Error('db is the SQLite handle; this app runs on PostgreSQL: use query()');
    return database.db;
  };
  // The newest started (highest startSeq), not the newest created_at: a test may start one in the past.
  const latestAttempt = async () => {
    const all = await store.listAttempts({ limit: Number.MAX_SAFE_INTEGER });
    const newest = all.reduce<AttemptRecord | undefined>(
      (a, b) => (a === undefined || b.startSeq > a.startSeq ? b : a),
      undefined,
    );
    if (newest === undefined) throw new Error('no attempt stored');
    return newest;
  };
  const site: Site = {
    ...testAppSite(url, options.publicUrl),
    latestAttempt,
    ...(own === undefined ? {} : { control: own.emulator.control }),
  };

  return {
    url,
    returnUrl,
    clientId: service.clientId,
    secret: service.clientSecret,
    get emulator(): TestEmulator {
      if (own === undefined) throw new Error('this app was given its service: it has no emulator of its own');
      return own.emulator;
    },
    kit,
    mobileKit,
    clock,
    store,
    kind: database.kind,
    get db() {
      return sqlite();
    },
    query: database.query,
    logs,
    requestUrls,
    errors,
    site,
    agent: (seen = newSeen()) => new Agent(site, { record: recordInto(seen) }),
    grants: (sessionId) =>
      (sqlite().prepare('SELECT COUNT(*) AS n FROM test_effects WHERE session_id = ?').get(sessionId) as { n: number })
        .n,
    allGrants: () => (sqlite().prepare('SELECT COUNT(*) AS n FROM test_effects').get() as { n: number }).n,
    attempt: (sessionId) => store.findAttemptBySessionId(sessionId),
    latestAttempt,
    attemptCount: async () => (await store.listAttempts({ limit: Number.MAX_SAFE_INTEGER })).length,
    async close() {
      await kit.close();
      await mobileKit?.close();
      for (const client of clients) await client.close();
      await closeServer(server);
      await own?.emulator.close();
      await database.close();
    },
  };
}

/** Effect rows per session id, on either store. */
export async function effectCounts(app: Pick<TestApp, 'query'>): Promise<Map<string, number>> {
  const rows = await app.query<{ session_id: string; n: number | string }>(
    'SELECT session_id, COUNT(*) AS n FROM test_effects GROUP BY session_id',
  );
  return new Map(rows.map((r) => [r.session_id, Number(r.n)]));
}
