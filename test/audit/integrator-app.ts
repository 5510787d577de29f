/**
 * A sound app written the ways integrators write theirs, for the audit's false-fail tests: each
 * option is a common, correct choice the audit must pass.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import BetterSqlite3 from 'better-sqlite3';
import express, { type NextFunction, type Request, type Response } from 'express';
import session from 'express-session';
import helmet from 'helmet';
import { createVerificationKit, type VerificationKitOptions } from 'hosted-sms-verify-kit';
import { createSqliteStore } from 'hosted-sms-verify-kit/sqlite';
import { createTestClock, startEmulator, type AuditOptions } from 'hosted-sms-verify-kit/testing';
import { closeServer, listen } from '../support/listen.ts';
import { userNamed } from '../support/users.ts';

export interface IntegratorChoices {
  /** Where the kit and the app's pages are mounted ('/account'): `app.use(prefix, router)`. */
  prefix?: string;
  /** How the start form's action is written: a path (default), a full URL (a template's `${baseUrl}/verify/start`) or relative to the page. */
  formAction?: 'path' | 'absolute' | 'relative' | 'otherOrigin';
  /** express-session with `rolling: true` and `sameSite: 'strict'`. */
  strictRollingSession?: boolean;
  /** A readable `lang` cookie set on every page (the language switcher's). */
  languageCookie?: boolean;
  /** Pages in French (the kit's `messages` and `locale`, the app's own pages). */
  french?: boolean;
  /** `errors: 'next'` and the app's own error handler. */
  errorsNext?: boolean;
  /** The app's error page lets caches keep it for a minute (with `errorsNext`). */
  cachedErrorPage?: boolean;
  /** Sign-in is a JSON API (`POST /api/session`). */
  jsonSignIn?: boolean;
  /** Every page of the app's own answers after this many ms. */
  slowMs?: number;
  /**
   * The sign-in clears the signed-out visit's cookies (`res.clearCookie`, as an app does with a
   * pending return path or the old session's cookie) before the new session is set.
   */
  clearsCookiesOnSignIn?: boolean;
  /** `trust proxy` as a hop count behind the TLS proxy. */
  trustProxy?: number | string | boolean;
  /** The kit's start budgets (`limits`), when not its defaults. */
  limits?: VerificationKitOptions['limits'];
}

export interface IntegratorApp {
  auditOptions: AuditOptions;
  close(): Promise<void>;
}

export async function startIntegratorApp(choices: IntegratorChoices = {}): Promise<IntegratorApp> {
  const prefix = choices.prefix ?? '';
  const server: Server = createServer();
  const port = await listen(server);
  const url = `http://localhost:${port}`;
  const clientId = 'integrator';
  const clientSecret = `integrator-${randomBytes(16).toString('hex')}`;
  const returnUrl = `${url}${prefix}/verify/return`;
  const clock = createTestClock();
  const emulator = await startEmulator({
    port: 0,
    clients: [{ clientId, secret: clientSecret, returnUrl }],
    clock,
    log: () => {},
  });
  const db = new BetterSqlite3(':memory:');
  db.exec('CREATE TABLE confirmed (session_id TEXT NOT NULL, user_ref TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO confirmed (session_id, user_ref) VALUES (?, ?)');
  const count = db.prepare('SELECT COUNT(*) AS n FROM confirmed WHERE session_id = ?');
  const logs: string[] = [];
  const line = (level: string) => (obj: Record<string, unknown>, msg: string) =>
    logs.push(JSON.stringify({ level, ...obj, msg }));
  const kit = createVerificationKit<unknown>({
    baseUrl: emulator.url,
    clientId,
    clientSecret,
    returnUrl,
    store: createSqliteStore({ database: db }),
    now: clock.now,
    logger: { info: line('info'), warn: line('warn'), error: line('error') },
    landing: { pendingRechecks: 0, pendingRecheckIntervalMs: 0 },
    ...(choices.errorsNext === true ? { errors: 'next' as const } : {}),
    ...(choices.limits === undefined ? {} : { limits: choices.limits }),
    ...(choices.french === true
      ? { locale: () => 'fr', messages: { fr: { complete: { title: 'Numéro confirmé' } } } as never }
      : {}),
    ...(prefix === ''
      ? {}
      : {
          routes: {
            start: `${prefix}/verify/start`,
            startAgain: `${prefix}/verify/start-again`,
            stepUp: `${prefix}/verify/step-up`,
          },
        }),
    resolveUser: (req) => {
      const name = (req.session as { user?: string } | undefined)?.user;
      return name === undefined ? null : userNamed(name);
    },
    actions: [
      {
        name: 'confirm_phone',
        operationSensitivity: 'normal',
        successPath: `${prefix}/done`,
        fulfil: (_tx, attempt) => void insert.run(attempt.sessionId, attempt.userRef),
      },
    ],
  });
  const slow = (_req: Request, _res: Response, next: NextFunction) => {
    if (choices.slowMs === undefined) return next();
    setTimeout(next, choices.slowMs);
  };
  const app = express();
  app.set('trust proxy', choices.trustProxy ?? 'loopback');
  app.use(helmet());
  app.use(
    session({
      name: 'app.sid',
      secret: randomBytes(16).toString('hex'),
      resave: false,
      saveUninitialized: false,
      ...(choices.strictRollingSession === true ? { rolling: true } : {}),
      cookie: { httpOnly: true, sameSite: choices.strictRollingSession === true ? 'strict' : 'lax', secure: 'auto' },
    }),
  );
  if (choices.languageCookie === true) {
    app.use((req, res, next) => {
      if (req.headers.cookie?.includes('lang=') !== true)
        res.cookie('lang', choices.french === true ? 'fr' : 'en', { sameSite: 'lax' });
      next();
    });
  }
  const site = express.Router();
  site.use(slow);
  const signIn = (req: Request, res: Response, next: NextFunction, user: unknown, answer: () => void) => {
    if (typeof user !== 'string' || !/^[a-z0-9]{1,40}$/.test(user)) {
      res.status(400).json({ error: 'user' });
      return;
    }
    if (choices.clearsCookiesOnSignIn === true) {
      res.clearCookie('return_to');
      res.clearCookie('app.sid');
    }
    req.session.regenerate((error) => {
      if (error) return next(error);
      (req.session as { user?: string }).user = user;
      req.session.save((saveError) => (saveError ? next(saveError) : answer()));
    });
  };
  site.post('/login', express.urlencoded({ extended: false }), (req, res, next) =>
    signIn(req, res, next, (req.body as { user?: unknown }).user, () => res.redirect(303, `${prefix}/`)),
  );
  site.post('/api/session', express.json(), (req, res, next) =>
    signIn(req, res, next, (req.body as { user?: unknown }).user, () => res.status(201).json({ ok: true })),
  );
  const formAction =
    choices.formAction === 'absolute'
      ? `${url}${prefix}/verify/start`
      : choices.formAction === 'relative'
        ? 'verify/start'
        : choices.formAction === 'otherOrigin'
          ? `http://127.0.0.1:9${prefix}/verify/start`
          : `${prefix}/verify/start`;
  site.get('/', (req, res) => {
    const user = (req.session as { user?: string }).user;
    const fr = choices.french === true;
    res.setHeader('Cache-Control', 'no-store');
    res.send(
      user === undefined
        ? `<!doctype html><html lang="${fr ? 'fr' : 'en'}"><title>${fr ? 'Connexion' : 'Sign in'}</title><form method="post" action="${prefix}/login"><input name="user"><button>${fr ? 'Se connecter' : 'Sign in'}</button></form>`
        : `<!doctype html><html lang="${fr ? 'fr' : 'en'}"><title>${fr ? 'Votre compte' : 'Your account'}</title><form method="post" action="${formAction}"><input type="hidden" name="_csrf" value="${kit.csrfToken(req)}"><button name="action" value="confirm_phone">${fr ? 'Confirmer mon numéro' : 'Confirm my number'}</button></form>`,
    );
  });
  site.get('/done', (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    res.send(
      kit.attempts.takeLanded(req) ? (choices.french === true ? 'Numéro confirmé.' : 'Confirmed.') : 'Nothing to show.',
    );
  });
  app.use(prefix === '' ? '/' : prefix, site);
  // The kit's router answers at '/' only; its routes carry the prefix.
  app.use(kit.router);
  if (choices.errorsNext === true) {
    app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
      const status = (error as { status?: number }).status ?? 500;
      if (choices.cachedErrorPage === true) res.setHeader('Cache-Control', 'public, max-age=60');
      res
        .status(status)
        .type('html')
        .send(`<!doctype html><title>Oops</title><p>Something went wrong (${status}).</p>`);
    });
  }
  server.on('request', app);
  const auditOptions: AuditOptions = {
    appUrl: url,
    emulatorUrl: emulator.url,
    clientId,
    clientSecret,
    signIn:
      choices.jsonSignIn === true
        ? async (agent, user) => {
            const answer = await agent.request(`${prefix}/api/session`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', origin: url },
              body: JSON.stringify({ user }),
            });
            if (answer.status !== 201) throw new Error(`sign-in answered ${answer.status}`);
            const home = await agent.request(`${prefix}/`);
            const csrf = /name="_csrf" value="([^"]*)"/.exec(home.body)?.[1];
            if (csrf === undefined) throw new Error('no start form');
            return { csrf };
          }
        : { path: `${prefix}/login`, fields: (user) => ({ user }), csrfFrom: `${prefix}/` },
    actions: [{ name: 'confirm_phone', path: `${prefix}/verify/start` }],
    kit,
    clock,
    probe: (sessionId) => (count.get(sessionId) as { n: number }).n,
    sweep: { run: () => kit.runSweep({ owner: 'audit-sweep' }), clock },
    logs: () => logs,
    proxy: { headers: { 'x-forwarded-proto': 'https' } },
  };
  return {
    auditOptions,
    async close() {
      await closeServer(server);
      await kit.close();
      await kit.store.close?.();
      await emulator.close();
      if (db.open) db.close();
    },
  };
}
