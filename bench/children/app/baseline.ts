/**
 * What an integrator would write by hand from the spec: start = CSRF token check, fresh state, the
 * start budgets (baseline-budgets.ts), POST /session with an Idempotency-Key, one INSERT, an
 * auto-submit form page; landing = look up the attempt by state (session_id must match), GET
 * /session, check verified + state + userRef, one IMMEDIATE transaction (conditional mark + the
 * action's INSERT), 303 to the stored path. Its table has the index the spec's sweep of pending
 * attempts needs, as the kit's has.
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import express, { type NextFunction, type Request, type Response } from 'express';
import { Pool } from 'undici';
import {
  ACTION,
  BASELINE_PENDING_INDEX,
  basicAuthorization,
  destinationOf,
  ENTERED_ACTION,
  SUCCESS_PATH,
  type ConfigureArgs,
  type SeedAttempt,
} from '../../common.ts';
import { configureBaselinePostgres } from './baseline-postgres.ts';
import { bag, baseApp, readStatus, type ConfiguredApp, type Counts } from './shared.ts';
import { baselineBudgets, type BaselineBudgets } from './baseline-budgets.ts';
import { numberBoundRef, readTypedNumber } from './typed-number.ts';

function safeEqual(a: string, b: string): boolean {
  const da = createHash('sha256').update(a).digest();
  const db2 = createHash('sha256').update(b).digest();
  return timingSafeEqual(da, db2) && a.length === b.length;
}

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The baseline's database: its attempts, its grants, and the statements the routes run. */
function openBaselineSqlite(path: string) {
  const bdb = new BetterSqlite3(path);
  bdb.pragma('busy_timeout = 5000');
  bdb.pragma('journal_mode = WAL');
  bdb.pragma('synchronous = NORMAL');
  bdb.exec(`CREATE TABLE IF NOT EXISTS attempts (
      state TEXT PRIMARY KEY, session_id TEXT NOT NULL UNIQUE, user_ref TEXT NOT NULL, action TEXT NOT NULL,
      return_to TEXT NOT NULL, outcome TEXT NOT NULL DEFAULT 'pending', created_at INTEGER NOT NULL, fulfilled_at INTEGER,
      destination TEXT) STRICT;
    ${BASELINE_PENDING_INDEX};
    CREATE TABLE IF NOT EXISTS bench_grants (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, user_ref TEXT NOT NULL);`);
  const insertAttempt = bdb.prepare(
    'INSERT INTO attempts (state, session_id, user_ref, action, return_to, created_at) VALUES (?, ?, ?, ?, ?, ?)',
  );
  // A typed number is stored with its attempt: it is the number the landing marks verified.
  const insertEnteredAttempt = bdb.prepare(
    'INSERT INTO attempts (state, session_id, user_ref, action, return_to, created_at, destination) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const byState = bdb.prepare('SELECT session_id, user_ref, return_to, outcome FROM attempts WHERE state = ?');
  const mark = bdb.prepare(
    "UPDATE attempts SET outcome = 'fulfilled', fulfilled_at = ? WHERE session_id = ? AND outcome = 'pending'",
  );
  const insertGrant = bdb.prepare('INSERT INTO bench_grants (session_id, user_ref) VALUES (?, ?)');
  const fulfil = bdb.transaction((sessionId: string, userRef: string) => {
    if (mark.run(Date.now(), sessionId).changes === 1) insertGrant.run(sessionId, userRef);
  });
  return { bdb, insertAttempt, insertEnteredAttempt, byState, fulfil, budgets: baselineBudgets(bdb) };
}

type BaselineDb = ReturnType<typeof openBaselineSqlite>;

export function configureBaseline(args: ConfigureArgs): ConfiguredApp {
  if (args.databaseUrl !== undefined) return configureBaselinePostgres(args);
  const sql = openBaselineSqlite(args.dbPath);
  const { bdb } = sql;
  const seed = bdb.transaction((attempts: SeedAttempt[]) => {
    const now = Date.now();
    for (const a of attempts) sql.insertAttempt.run(a.state, a.sessionId, a.userRef, ACTION, SUCCESS_PATH, now);
  });
  const pool = new Pool(new URL(args.emulatorUrl).origin, { keepAliveTimeout: 10_000 });
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
        await start(req, res, { args, sql, pool, authorization });
      } catch (error) {
        next(error);
      }
    },
  );
  app.get('/verify/return', async (req: Request, res: Response, next: NextFunction) => {
    try {
      await land(req, res, { sql, pool, authorization });
    } catch (error) {
      next(error);
    }
  });
  return { app, db: bdb, upstream: pool, seed, counts: sqliteCounts(bdb) };
}

function sqliteCounts(bdb: Database): () => Counts {
  const grants = bdb.prepare('SELECT COUNT(*) AS n FROM bench_grants');
  const fulfilled = bdb.prepare("SELECT COUNT(*) AS n FROM attempts WHERE outcome = 'fulfilled'");
  return () => ({ grants: (grants.get() as { n: number }).n, fulfilled: (fulfilled.get() as { n: number }).n });
}

interface Deps {
  sql: BaselineDb & { budgets?: BaselineBudgets | undefined };
  pool: Pool;
  authorization: string;
}

/** What the session is created for: the user's own number, or the one typed into the start form. */
interface Recipient {
  /** The userRef sent to the service (bound to the number when the number was typed). */
  serviceRef: string;
  destination: string;
}

async function start(req: Request, res: Response, deps: Deps & { args: ConfigureArgs }): Promise<void> {
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
  if (body.action !== ACTION && body.action !== ENTERED_ACTION) {
    res.status(400).send('action');
    return;
  }
  const typed = body.action === ENTERED_ACTION ? readTypedNumber(body.phone) : undefined;
  if (typed === 'invalid' || typed === 'refused') {
    res.status(422).type('html').send(`<!doctype html><title>Phone number</title><p>${typed}</p>`);
    return;
  }
  const recipient: Recipient =
    typed === undefined
      ? { serviceRef: s.user, destination: destinationOf(s.user) }
      : { serviceRef: numberBoundRef(s.user, typed), destination: typed };
  // Spent before the text, as the kit's start limits are.
  if (deps.sql.budgets !== undefined && !deps.sql.budgets.spend(s.user, recipient.destination, req.ip ?? '')) {
    res.status(429).send('too many starts');
    return;
  }
  const state = randomBytes(32).toString('base64url');
  const created = await createSession(deps, recipient, state);
  if (created === undefined) {
    res.status(502).send('service');
    return;
  }
  if (typed === undefined)
    deps.sql.insertAttempt.run(state, created.sessionId, s.user, ACTION, SUCCESS_PATH, Date.now());
  else
    deps.sql.insertEnteredAttempt.run(
      state,
      created.sessionId,
      s.user,
      ENTERED_ACTION,
      SUCCESS_PATH,
      Date.now(),
      typed,
    );
  sendHandoffPage(res, created);
}

/** The auto-submit page that posts the handoff to the service's verifyUrl, under a nonce CSP. */
function sendHandoffPage(res: Response, created: { verifyUrl: string; handoff: string }): void {
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
}

/** POST /session with a fresh Idempotency-Key; undefined when the service did not create one. */
async function createSession(
  deps: Deps & { args: ConfigureArgs },
  recipient: Recipient,
  state: string,
): Promise<{ sessionId: string; verifyUrl: string; handoff: string } | undefined> {
  const answer = await deps.pool.request({
    method: 'POST',
    path: '/session',
    headers: {
      authorization: deps.authorization,
      accept: 'application/json',
      'content-type': 'application/json',
      'idempotency-key': randomUUID(),
    },
    body: JSON.stringify({
      returnUrl: deps.args.returnUrl,
      channel: 'sms',
      destination: recipient.destination,
      operationSensitivity: 'normal',
      userRef: recipient.serviceRef,
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
  )
    return undefined;
  return { sessionId: created.sessionId, verifyUrl: created.verifyUrl, handoff: created.handoff };
}

async function land(req: Request, res: Response, deps: Deps): Promise<void> {
  const { session_id: sessionId, state } = req.query;
  if (typeof sessionId !== 'string' || typeof state !== 'string') {
    res.status(400).send('bad link');
    return;
  }
  const row = deps.sql.byState.get(state) as
    { session_id: string; user_ref: string; return_to: string; outcome: string } | undefined;
  if (row === undefined || row.session_id !== sessionId) {
    res.status(400).send('unknown');
    return;
  }
  if (row.outcome === 'pending') {
    const read = await readStatus(deps.pool, deps.authorization, { sessionId, state, userRef: row.user_ref });
    if (read === 'service_error') {
      res.status(502).send('service');
      return;
    }
    if (read === 'not_verified') {
      res.status(200).type('html').send('<!doctype html><title>Pending</title><p>Not verified (yet).</p>');
      return;
    }
    deps.sql.fulfil.immediate(sessionId, row.user_ref);
  }
  if (bag(req).user !== row.user_ref) {
    res.type('html').send('<!doctype html><title>Done</title><p>Done.</p>');
    return;
  }
  res.set('Cache-Control', 'no-store');
  res.redirect(303, row.return_to);
}
