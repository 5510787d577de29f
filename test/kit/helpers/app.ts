/**
 * A tiny integrator app for the kit's tests: express + express-session (its own cookie name) +
 * helmet() defaults + the kit + two actions writing to their own table in the same SQLite file.
 * The app listens first (port 0) so the emulator can register `http://localhost:<port>/verify/return`.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import express, { type NextFunction, type Request, type Response } from 'express';
import session from 'express-session';
import helmet from 'helmet';
import { startTestEmulator, type TestEmulator } from '../../helpers/emulator.ts';
import {
  createSqliteStore,
  createVerificationKit,
  createVerifyClient,
  KitError,
  KitErrorCode,
  type ActionDefinition,
  type VerificationKit,
  type ClientSettings,
  type VerificationKitOptions,
  type VerifyClient,
} from '../../../middleware/index.ts';

export const USERS: Record<string, { userRef: string; destination: string }> = {
  alice: { userRef: 'user-alice', destination: '+15550001111' },
  bob: { userRef: 'user-bob', destination: '+15550002222' },
};

export interface KitTestAppOptions {
  /** Wraps the real client (e.g. to alter the echo the service gives). */
  wrapClient?: (client: VerifyClient) => VerifyClient;
  clientTimeouts?: ClientSettings['timeouts'];
  clientRetry?: ClientSettings['retry'];
  /** Any other kit option. */
  kit?: Partial<VerificationKitOptions<Database>>;
  /** Emulator client platform and returnUrl (mobile tests). */
  mobileReturnUrl?: string;
}

export interface KitTestApp {
  /** http://localhost:<port> */
  url: string;
  returnUrl: string;
  clientId: string;
  secret: string;
  emulator: TestEmulator;
  kit: VerificationKit<Database>;
  db: Database;
  /** Every log line the kit wrote (JSON). */
  logs: string[];
  /** Every URL the app received. */
  requestUrls: string[];
  /** Every error that reached the app's Express error handler (message, code, own properties). */
  errors: string[];
  /** Rows the actions wrote for a session. */
  grants(sessionId: string): number;
  allGrants(): number;
  attempt(sessionId: string): AttemptRow | undefined;
  latestAttempt(): AttemptRow;
  attemptCount(): number;
  close(): Promise<void>;
}

export interface AttemptRow {
  state: string;
  session_id: string;
  user_ref: string;
  action: string;
  params: string;
  outcome: string;
  failure_reason: string | null;
}

export async function startKitTestApp(options: KitTestAppOptions = {}): Promise<KitTestApp> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const url = `http://localhost:${port}`;
  const mobile = options.mobileReturnUrl !== undefined;
  const returnUrl = options.mobileReturnUrl ?? `${url}/verify/return`;
  const clientId = `kit-test-${port}`;
  const secret = `kit-secret-${randomBytes(16).toString('hex')}`;
  const emulator = await startTestEmulator({
    clients: [{ clientId, secret, returnUrl, platform: mobile ? 'mobile' : 'web' }],
  });

  const db = new BetterSqlite3(':memory:');
  db.exec(
    `CREATE TABLE test_grants (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, user_ref TEXT NOT NULL, detail TEXT NOT NULL)`,
  );
  const store = createSqliteStore({ database: db });
  const insertGrant = db.prepare('INSERT INTO test_grants (session_id, user_ref, detail) VALUES (?, ?, ?)');

  const actions: ActionDefinition<Database>[] = [
    {
      name: 'grant_badge',
      operationSensitivity: 'normal',
      successPath: '/done/badge',
      // Every verified badge grant applies (two tabs, two badges); set_note keeps the default 'latest'.
      ordering: 'independent',
      fulfil(tx, attempt) {
        // Same database handle as the kit's transaction: commits with the fulfilment mark.
        tx.prepare('INSERT INTO test_grants (session_id, user_ref, detail) VALUES (?, ?, ?)').run(
          attempt.sessionId,
          attempt.userRef,
          'badge',
        );
      },
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
      fulfil(_tx, attempt) {
        const params = attempt.params as { note: string };
        insertGrant.run(attempt.sessionId, attempt.userRef, `note:${params.note}`);
      },
    },
  ];

  const logs: string[] = [];
  const line = (level: string) => (obj: Record<string, unknown>, msg: string) =>
    logs.push(JSON.stringify({ level, ...obj, msg }));
  const realClient = createVerifyClient({
    baseUrl: emulator.url,
    clientId,
    clientSecret: secret,
    ...(options.clientTimeouts ? { timeouts: options.clientTimeouts } : {}),
    retry: { baseDelayMs: 50, maxDelayMs: 300, ...options.clientRetry },
  });
  const client = options.wrapClient ? options.wrapClient(realClient) : realClient;

  const GENEROUS_LIMITS = {
    perUser: { points: 10_000, durationSeconds: 60 },
    perDestination: { points: 10_000, durationSeconds: 60 },
    perIp: { points: 10_000, durationSeconds: 60 },
  };
  const kit = createVerificationKit<Database>({
    baseUrl: emulator.url,
    clientId,
    clientSecret: secret,
    returnUrl,
    platform: mobile ? 'mobile' : 'web',
    store,
    actions,
    client,
    resolveUser: (req) => {
      const name = mobile ? req.get('x-test-user') : (req.session as { user?: string }).user;
      return name !== undefined && USERS[name] !== undefined ? USERS[name] : null;
    },
    logger: { info: line('info'), warn: line('warn'), error: line('error') },
    landing: { pendingRechecks: 2, pendingRecheckIntervalMs: 150, refreshSeconds: 2, refreshWindowMs: 60_000 },
    // Suites start many attempts per user; the limits' own tests pass `kit.limits` to tighten them.
    limits: GENEROUS_LIMITS,
    ...options.kit,
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
      name: 'kit_test_sid',
      secret: randomBytes(16).toString('hex'),
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
  app.get('/test/csrf', (req, res) => {
    res.json({ csrf: kit.csrfToken(req) });
  });
  // The integrator's own page with the start form (for the browser test), under helmet's defaults.
  app.get('/form', (req, res) => {
    res.type('html').send(`<!doctype html><html><head><title>Form</title></head><body>
<form method="post" action="/verify/start"><input type="hidden" name="_csrf" value="${kit.csrfToken(req)}">
<input type="hidden" name="action" value="grant_badge"><button id="go" type="submit">Verify</button></form></body></html>`);
  });
  app.get('/done/:what', (req, res) => {
    res.type('html').send(`<!doctype html><title>Done</title><h1 id="done">done ${req.params.what}</h1>`);
  });
  app.use(kit.router);
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    errors.push(describeError(error));
    const status = (error as { status?: number }).status ?? 500;
    res.status(status).json({ error: (error as { code?: string }).code ?? 'internal' });
  });
  server.on('request', app);

  const count = db.prepare('SELECT COUNT(*) AS n FROM test_grants WHERE session_id = ?');
  const countAll = db.prepare('SELECT COUNT(*) AS n FROM test_grants');
  const bySession = db.prepare('SELECT * FROM verify_kit_attempts WHERE session_id = ?');
  const latest = db.prepare('SELECT * FROM verify_kit_attempts ORDER BY created_at DESC, rowid DESC LIMIT 1');
  const attempts = db.prepare('SELECT COUNT(*) AS n FROM verify_kit_attempts');

  return {
    url,
    returnUrl,
    clientId,
    secret,
    emulator,
    kit,
    db,
    logs,
    requestUrls,
    errors,
    grants: (sessionId) => (count.get(sessionId) as { n: number }).n,
    allGrants: () => (countAll.get() as { n: number }).n,
    attempt: (sessionId) => bySession.get(sessionId) as AttemptRow | undefined,
    latestAttempt: () => {
      const row = latest.get() as AttemptRow | undefined;
      if (row === undefined) throw new Error('no attempt stored');
      return row;
    },
    attemptCount: () => (attempts.get() as { n: number }).n,
    async close() {
      await kit.close();
      await realClient.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await emulator.close();
      await store.close();
      db.close();
    },
  };
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
