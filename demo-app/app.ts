/**
 * The demo integrator: an Express app with a demo sign-in and two actions guarded by SMS
 * verification through the kit. Importable by tests (listen on port 0); run.ts wires it up for
 * `npm run demo`.
 *
 * Order matters: helmet (every response) -> express-session (the kit's CSRF token and resolveUser
 * read it) -> the demo's routes -> the kit's router at '/' (start route, start-again page, and the
 * landing at the returnUrl's path) -> 404 and error pages.
 */
import { createHmac } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import session from 'express-session';
import helmet from 'helmet';
import type { Database } from 'better-sqlite3';
import {
  createVerificationKit,
  type KitLogger,
  type StartLimitsOptions,
  type VerificationKit,
  type VerifyStore,
} from 'hosted-sms-verify-kit';
import { createDemoActions } from './actions.ts';
import { ACTION_LABELS, CHANGE_PAYOUT, CONFIRM_PHONE, maskAccountNumber } from './domain.ts';
import type { DemoConfig } from './config.ts';
import { demoCsrfToken, demoCsrfValid } from './csrf.ts';
import { openDemoData } from './data.ts';
import type { DemoUser } from './db.ts';
import { demoKitMessages, demoTexts } from './i18n.ts';
import './session-data.ts';
import { activityPage } from './views/activity.ts';
import { errorPage } from './views/errors.ts';
import { homePage } from './views/home.ts';
import { demoKitPages } from './views/kit-pages.ts';
import type { Viewer } from './views/layout.ts';
import { signinPage } from './views/signin.ts';
import { CSS } from './views/style.ts';
import { verifiedPage } from './views/verified.ts';
import { verificationsPage } from './views/verifications.ts';

export const SESSION_COOKIE = 'demo.sid';
const SESSION_MAX_AGE_MS = 8 * 60 * 60 * 1000;

export type DemoAppOptions = Pick<
  DemoConfig,
  'clientId' | 'clientSecret' | 'returnUrl' | 'databasePath' | 'sessionSecret' | 'trustProxy'
> & {
  /** PostgreSQL instead of the SQLite file (DATABASE_URL): for several instances of the demo. */
  databaseUrl?: string | undefined;
  /** The service (or emulator) base address. */
  verifyBaseUrl: string;
  logger?: KitLogger;
  now?: () => number;
  /** Budgets of the start limits (the kit's defaults when omitted), for stacks that start many attempts. */
  startLimits?: Pick<StartLimitsOptions, 'perUser' | 'perDestination' | 'perIp'>;
};

export interface DemoApp {
  app: express.Express;
  kit: VerificationKit<unknown>;
  /** 'sqlite' (DATABASE_PATH) or 'postgres' (DATABASE_URL). */
  storeKind: 'sqlite' | 'postgres';
  /** The kit's store (attempts), on the demo's database; tests read attempts through it. */
  store: VerifyStore<unknown>;
  /** The SQLite handle (SQLite only: throws on PostgreSQL). */
  db: Database;
  close(): Promise<void>;
}

export function createDemoApp(options: DemoAppOptions): DemoApp {
  const now = options.now ?? Date.now;
  const data = openDemoData({
    databasePath: options.databasePath,
    databaseUrl: options.databaseUrl,
    sessionTtlMs: SESSION_MAX_AGE_MS,
    now,
  });
  const queries = data.reads;

  // The kit's attempts live in the same database, so an action's effect and the fulfilment mark
  // commit in one transaction (the `tx` each fulfil receives is that transaction's handle).
  const kit = createVerificationKit<unknown>({
    baseUrl: options.verifyBaseUrl,
    clientId: options.clientId,
    clientSecret: options.clientSecret,
    returnUrl: options.returnUrl,
    store: data.store,
    actions: createDemoActions(queries, data.writes, now),
    async resolveUser(req) {
      const user = await signedInUser(req);
      return user === undefined ? null : { userRef: user.id, destination: user.phone };
    },
    pages: demoKitPages,
    // Destination counters are keyed by an HMAC; the demo derives that key from its own server secret.
    limits: {
      ...options.startLimits,
      destinationKey: createHmac('sha256', options.sessionSecret).update('verify kit destination limits').digest(),
    },
    // After commit, never inside the transaction: the "emails" shown on the Activity page.
    onOutcome: data.onOutcome,
    // English and French, chosen by Accept-Language (the kit's default), like the demo's own pages.
    messages: demoKitMessages,
    now,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });

  const sessionStore = data.sessionStore;
  const https = new URL(options.returnUrl).protocol === 'https:';

  const app = express();
  app.disable('x-powered-by');
  // Behind a TLS-terminating proxy set TRUST_PROXY (e.g. 1 or "loopback") so req.secure, and with
  // it the cookie's Secure flag, follow X-Forwarded-Proto. Off by default: nothing to trust on loopback.
  app.set('trust proxy', options.trustProxy);

  app.use(
    helmet({
      contentSecurityPolicy: {
        // upgrade-insecure-requests only when the demo is served over https.
        directives: { frameAncestors: ["'none'"], ...(https ? {} : { upgradeInsecureRequests: null }) },
      },
      // HSTS means nothing over plain http (and would pin localhost to https); on only for https.
      strictTransportSecurity: https,
      xFrameOptions: { action: 'deny' },
      // Not helmet's default no-referrer: with it Chromium sends `Origin: null` on form POSTs, and the
      // kit's start route rightly refuses a null origin. same-origin still sends nothing to other sites.
      referrerPolicy: { policy: 'same-origin' },
    }),
  );
  // Every page is in the language Accept-Language asks for (English or French).
  app.use((_req, res, next) => {
    res.vary('Accept-Language');
    next();
  });
  app.use(
    session({
      name: SESSION_COOKIE,
      secret: options.sessionSecret,
      store: sessionStore,
      resave: false,
      saveUninitialized: false,
      rolling: true,
      cookie: {
        httpOnly: true,
        // Lax: the return from the verification site is a top-level GET navigation, which carries it.
        sameSite: 'lax',
        // Secure whenever the request arrived over https (directly or, with trust proxy, via the proxy).
        secure: 'auto',
        maxAge: SESSION_MAX_AGE_MS,
        path: '/',
      },
    }),
  );

  const form = express.urlencoded({ extended: false, limit: '4kb', parameterLimit: 10 });

  async function signedInUser(req: Request): Promise<DemoUser | undefined> {
    const id = req.session?.userId;
    return typeof id === 'string' ? queries.user(id) : undefined;
  }

  function viewer(req: Request, user: DemoUser): Viewer {
    return { name: user.name, csrf: demoCsrfToken(req) };
  }

  /** Pages for signed-in users; everyone else goes to the (fixed) sign-in path. */
  function withUser(handler: (req: Request, res: Response, user: DemoUser) => void | Promise<void>) {
    return async (req: Request, res: Response): Promise<void> => {
      const user = await signedInUser(req);
      if (user === undefined) {
        res.redirect(303, '/signin');
        return;
      }
      res.setHeader('Cache-Control', 'no-store');
      // A rejected promise goes to Express's error handler.
      await handler(req, res, user);
    };
  }

  app.get('/favicon.ico', (_req, res) => {
    res.status(204).setHeader('Cache-Control', 'public, max-age=86400').end();
  });

  app.get('/assets/demo.css', (_req, res) => {
    res.type('css').setHeader('Cache-Control', 'public, max-age=300').send(CSS);
  });

  app.get('/signin', async (req, res) => {
    if ((await signedInUser(req)) !== undefined) {
      res.redirect(303, '/');
      return;
    }
    res.setHeader('Cache-Control', 'no-store');
    res.send(signinPage({ t: demoTexts(req), users: await queries.users(), csrf: demoCsrfToken(req) }));
  });

  app.post('/signin', form, async (req, res, next) => {
    const userId = (req.body as Record<string, unknown> | undefined)?.userId;
    const user = typeof userId === 'string' ? await queries.user(userId) : undefined;
    if (!demoCsrfValid(req)) {
      // Refused without creating or changing any session.
      res.status(403).setHeader('Cache-Control', 'no-store');
      res.send(errorPage({ t: demoTexts(req), status: 403, ...demoTexts(req).errors.signinRefused }));
      return;
    }
    if (user === undefined) {
      res.status(400).setHeader('Cache-Control', 'no-store');
      const t = demoTexts(req);
      const users = await queries.users();
      res.send(signinPage({ t, users, csrf: demoCsrfToken(req), error: t.signin.pickUser }));
      return;
    }
    // A new session id at sign-in (no fixation); the old session's tokens are gone with it.
    req.session.regenerate((error) => {
      if (error) return next(error);
      req.session.userId = user.id;
      req.session.save((saveError) => (saveError ? next(saveError) : res.redirect(303, '/')));
    });
  });

  app.post('/signout', form, (req, res, next) => {
    if (!demoCsrfValid(req)) {
      res.status(403).send(errorPage({ t: demoTexts(req), status: 403, ...demoTexts(req).errors.signoutRefused }));
      return;
    }
    req.session.destroy((error) => {
      if (error) return next(error);
      res.clearCookie(SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'lax' });
      res.redirect(303, '/signin');
    });
  });

  app.get(
    '/',
    withUser(async (req, res, user) => {
      res.send(
        homePage({
          t: demoTexts(req),
          viewer: viewer(req, user),
          user,
          payout: await queries.payoutAccount(user.id),
          kitCsrf: kit.csrfToken(req),
          startPath: '/verify/start',
        }),
      );
    }),
  );

  app.get(
    '/activity',
    withUser(async (req, res, user) => {
      const entries = await queries.activity(user.id);
      const emails = await queries.outbox(user.id);
      res.send(activityPage({ t: demoTexts(req), viewer: viewer(req, user), entries, emails }));
    }),
  );

  // The kit's read API for support screens: this user's attempts, outcome, age and who settled them.
  app.get(
    '/verifications',
    withUser(async (req, res, user) => {
      const attempts = await kit.attempts.find({ userRef: user.id, limit: 50 });
      res.send(verificationsPage({ t: demoTexts(req), viewer: viewer(req, user), attempts, now: now() }));
    }),
  );

  // The actions' successPaths: the kit redirects here after fulfilment; the page reads the result back.
  app.get(
    '/verified/phone',
    withUser(async (req, res, user) => {
      const latest = (await queries.activity(user.id)).find((entry) => entry.action === CONFIRM_PHONE);
      const t = demoTexts(req);
      res.send(
        verifiedPage({
          t,
          viewer: viewer(req, user),
          title: t.verified.phoneTitle,
          text: t.verified.phoneText(user.verifiedPhone ?? user.phone),
          latest,
        }),
      );
    }),
  );

  app.get(
    '/verified/payout',
    withUser(async (req, res, user) => {
      const latest = (await queries.activity(user.id)).find((entry) => entry.action === CHANGE_PAYOUT);
      const account = await queries.payoutAccount(user.id);
      const t = demoTexts(req);
      res.send(
        verifiedPage({
          t,
          viewer: viewer(req, user),
          title: t.verified.payoutTitle,
          text:
            account === undefined ? t.verified.payoutUpdated : t.verified.payoutText(account.accountNumber.slice(-4)),
          latest,
        }),
      );
    }),
  );

  // For scripted checks: the signed-in user's profile and fulfilled actions.
  app.get('/api/me', async (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    const user = await signedInUser(req);
    if (user === undefined) {
      res.status(401).json({ error: 'not_signed_in', message: 'Sign in at /signin first.' });
      return;
    }
    const payout = await queries.payoutAccount(user.id);
    const activity = await queries.activity(user.id);
    res.json({
      user: {
        id: user.id,
        name: user.name,
        email: user.email,
        phone: user.phone,
        phoneVerified: user.verifiedPhone === user.phone && user.phoneVerifiedAt !== null,
        phoneVerifiedAt: user.phoneVerifiedAt === null ? null : new Date(user.phoneVerifiedAt).toISOString(),
        payoutAccount:
          payout === undefined
            ? null
            : { masked: maskAccountNumber(payout.accountNumber), changedAt: new Date(payout.changedAt).toISOString() },
      },
      actions: activity.map((entry) => ({
        sessionId: entry.sessionId,
        action: entry.action,
        label: ACTION_LABELS[entry.action] ?? entry.action,
        detail: entry.detail,
        at: new Date(entry.at).toISOString(),
      })),
    });
  });

  // The kit: POST /verify/start, GET /verify/start-again, GET <returnUrl path> (the landing).
  app.use('/', kit.router);

  app.use((req: Request, res: Response) => {
    if (req.path.startsWith('/api/')) {
      res.status(404).json({ error: 'not_found', message: 'No such endpoint.' });
      return;
    }
    res.status(404).send(errorPage({ t: demoTexts(req), status: 404, ...demoTexts(req).errors.notFound }));
  });

  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    const status = (error as { status?: unknown }).status;
    const clientError = typeof status === 'number' && status >= 400 && status < 500;
    if (!clientError)
      options.logger?.error({ err: error instanceof Error ? error.message : String(error) }, 'demo: unhandled error');
    if (res.headersSent) return;
    const code = clientError ? status : 500;
    if (req.path.startsWith('/api/')) {
      res.status(code).json({ error: clientError ? 'bad_request' : 'internal_error' });
      return;
    }
    const t = demoTexts(req);
    res.status(code).send(errorPage({ t, status: code, ...(clientError ? t.errors.badRequest : t.errors.server) }));
  });

  let closed: Promise<void> | undefined;
  return {
    app,
    kit,
    storeKind: data.kind,
    store: data.store,
    get db(): Database {
      if (data.db === undefined) {
        throw new Error('The demo runs on PostgreSQL (DATABASE_URL): there is no SQLite handle.');
      }
      return data.db;
    },
    close() {
      closed ??= (async () => {
        await kit.close();
        await data.close();
      })();
      return closed;
    },
  };
}
