/**
 * A small integrator app for the audit's fixtures, written as an integrator would (the kit by its
 * package name, express-session, helmet), with one deliberate flaw switched on at a time:
 * - `fulfilsOnArrival`: its own landing handler grants on arrival (the attempt found by state and
 *   session_id, but the service never re-read); the kit's fulfil does nothing.
 * - `skipsStateCheck`: a "lenient" landing fills in the stored state for any known session_id.
 * - `nextRedirect`: after the landing, sends the user to `?next=` instead of the kit's Location.
 * - `secretInQuery`: the action's successPath carries the client secret in its query.
 * - `noStartLimits`: the kit's start limits turned off.
 * - `looseCookie`: the session cookie without HttpOnly and with SameSite None.
 * - `keepsSessionOnSignIn`: the sign-in sets the user on the session the browser came with (no
 *   regenerate), so a cookie planted before it is signed in as the victim afterwards.
 * - `grantsOnRedirect`: grants when the landing redirects to the success page, not inside fulfil.
 * - `stripsOrigin`: a middleware drops Origin and Sec-Fetch-Site ("our CDN mangles them"); the
 *   step-up guard then keeps no form (403).
 * - `logsResponses`: a debug logger writes every response body to the app's log.
 * - `fillsMissingToken`: a start without `_csrf` gets the session's token filled in.
 * - `cacheEverything`: a caching middleware sets `public, max-age=60` on every answer.
 * - `remembersNext`: the start keeps `?next=` in the session; the success page redirects there.
 * - `hopsToNext`: the start keeps `?next=`; the success page goes on through three pages of its own
 *   (/welcome, /tour, /continue) and the last one redirects there.
 * - `bodyNext`: the start keeps a `returnTo` field of its form body; the success page redirects there.
 * - `remembersAnyNext`: any GET with `?return_to=` is remembered; the success page redirects there.
 * - `successGrantsBySessionId`: the success page carries `?session_id=` and grants that attempt
 *   "just in case the landing missed it", whatever its status or owner.
 * - `successGrantsLatest`: the success page grants the signed-in user's newest attempt "just in case".
 * - `getStartLink`: a GET of the start path (a "verify now" link in an email) starts a verification.
 * - `anyMethodStarts`: every method on the start path is treated as the form's POST.
 * - `trustsAnyProxy`: `trust proxy` is `true`: the client's own X-Forwarded-For names its IP.
 * - `readsRealIp`: the client IP is taken from X-Real-IP when present.
 * - `readsForwarded`: the client IP is taken from the `Forwarded` header's `for=` when present.
 * - `unknownLandsLatest`: a landing whose session_id the app does not know is "recovered" as the
 *   signed-in user's newest attempt.
 * - `landingSignsIn`: a landing signs its browser in as the attempt's owner.
 * - `thanksElsewhere`: the owner's landing goes on to a "thank you" page on another origin.
 * - `secretInPage`: the success page renders the client secret, HTML-escaped, in a meta tag.
 * - `secretInLog`: the app logs its configuration as JSON at startup, the secret JSON-escaped.
 * - `secretInHeader`: every answer carries the secret in base64 in a debug header.
 * - `secretInBlob`: the success page redirects to a welcome page whose query carries the app's
 *   configuration as base64 JSON (`btoa(JSON.stringify(...))`), the secret inside it; this app's
 *   secret is 10 characters, the shortest the kit accepts.
 * Its second action, `change_phone`, texts the number typed into the start form (`destination:
 * 'entered'`); its fulfil makes it the user's number (`phones`) and writes one grant. Its flaws:
 * - `writesNumberAtStart`: the typed number is saved as the user's ("unverified") when the form is posted.
 * - `numberFromLanding`: a landing whose query carries `phone` ("the app's deep link") keeps it, and
 *   the success page saves it as the user's number.
 * - `remembersTypedNumber`: every post of the number form keeps its `phone` in the session, and the
 *   success page saves the one kept last as the user's number.
 * - `allowsPremiumRate`: the destination policy lets premium-rate and shared-cost numbers through.
 * - `numberOnDonePage`: the success page says "Your number is now" with the user's number in full.
 * Its third action, `close_account`, starts only after a step-up of scope account_closing (10
 * minutes, `requireRecentVerification` on the action). Its flaw:
 * - `unguardedStart`: the action without it ("the page with the form is behind step-up").
 * Its own routes behind the kit's step-up guard: the page GET /account (scope see_account, 10
 * minutes) and the form POST /payees (scope add_payee, 5 minutes, bound to the payee), whose
 * handler writes one row in `payees`. Their flaws:
 * - `unguardedPost`: POST /payees has no guard ("the page with the form is behind step-up").
 * - `accountUnlocked`: once /account opened, the session remembers it and skips the guard.
 * - `sudoMode`: one session-wide "verified" timestamp (10 minutes) skips every guard.
 * - `noBindTo`: the payee guard without bindTo (a grant for one payee opens every payee).
 * - `writesBeforeGuard`: the payee is saved ("as pending") by a middleware before the guard.
 * - `textsOnGet`: "one click fewer": a GET of /account presses the guard's button for the user.
 * - `returnsToNext`: /account remembers `?next=` and sends the user there once it opens.
 * - `redirectsBack`: the payee handler redirects to the Referer.
 * - `methodCaseOverride`: a hand-written method override (`req.method = req.body._method`, as sent)
 *   and the guards called only for the methods they name, compared in upper case.
 * - `verifiedAnywhere`: /account opens for a user with a fulfilled see_account attempt in the last
 *   10 minutes (kit.attempts), whichever browser verified.
 * - `grantShortcut`: a payee form goes straight to its handler when the user holds a fresh grant
 *   for the payee (kit.grants), without the guard.
 * The three secret flaws use a secret with characters that escaping changes (`"<&/>`).
 * A test may instead write its own mistake as code (`CustomFlaw`): middleware mounted before the
 * start and the kit, a landing handler before the kit's, or its own success page.
 * Each grant is one row in `grants` (no unique constraint: a second grant shows as a second row).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import BetterSqlite3 from 'better-sqlite3';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import session from 'express-session';
import helmet from 'helmet';
import {
  createVerificationKit,
  type ActionDefinition,
  type VerificationKit,
  type VerificationKitOptions,
} from 'hosted-sms-verify-kit';
import { createSqliteStore } from 'hosted-sms-verify-kit/sqlite';
import { createTestClock, startEmulator, type AuditOptions, type RunningEmulator } from 'hosted-sms-verify-kit/testing';
import { closeServer, listen } from '../support/listen.ts';
import { userNamed } from '../support/users.ts';

export type Flaw =
  | 'fulfilsOnArrival'
  | 'skipsStateCheck'
  | 'nextRedirect'
  | 'secretInQuery'
  | 'noStartLimits'
  | 'looseCookie'
  | 'grantsOnRedirect'
  | 'stripsOrigin'
  | 'logsResponses'
  | 'fillsMissingToken'
  | 'cacheEverything'
  | 'remembersNext'
  | 'hopsToNext'
  | 'bodyNext'
  | 'remembersAnyNext'
  | 'successGrantsBySessionId'
  | 'successGrantsLatest'
  | 'getStartLink'
  | 'anyMethodStarts'
  | 'trustsAnyProxy'
  | 'readsRealIp'
  | 'readsForwarded'
  | 'unknownLandsLatest'
  | 'landingSignsIn'
  | 'thanksElsewhere'
  | 'secretInPage'
  | 'secretInLog'
  | 'secretInHeader'
  | 'secretInBlob'
  | 'unguardedPost'
  | 'accountUnlocked'
  | 'sudoMode'
  | 'noBindTo'
  | 'writesBeforeGuard'
  | 'textsOnGet'
  | 'returnsToNext'
  | 'redirectsBack'
  | 'methodCaseOverride'
  | 'verifiedAnywhere'
  | 'grantShortcut'
  | 'writesNumberAtStart'
  | 'numberFromLanding'
  | 'allowsPremiumRate'
  | 'numberOnDonePage'
  | 'remembersTypedNumber'
  | 'unguardedStart'
  | 'keepsSessionOnSignIn';

/** Flaws whose client secret holds characters HTML and JSON escape. */
const ESCAPED_SECRET_FLAWS: readonly (Flaw | undefined)[] = ['secretInPage', 'secretInLog', 'secretInHeader'];

/** What the app hands a test's own mistake. */
export interface SampleContext {
  kit: VerificationKit<unknown>;
  url: string;
  clientId: string;
  clientSecret: string;
  /** Inserts one row in `grants` (the probe counts them per session id). */
  insert(sessionId: string, userRef: string): void;
  grants(sessionId: string): number;
  /** Makes `phone` the user's number (what change_phone's fulfil writes). */
  savePhone(userRef: string, phone: string): void;
  /** The user's number, as change_phone's fulfil wrote it (null before). */
  phoneOf(userRef: string): string | null;
  logs: string[];
}

/** An integrator's mistake written by the test itself, as code. */
export interface CustomFlaw {
  /** The client secret (otherwise a random one). */
  secret?: string;
  /** The host name of the emulator's hosted page (`verify.localhost`, as the emulator command has it). */
  emulatorPageHost?: string;
  /** The host the app is reached at (`localhost` unless given, e.g. `app.localhost`, or `[::1]`, listened on). */
  appHost?: string;
  /** The action's fulfil() writes no grant (the mistake writes it elsewhere). */
  noFulfilEffect?: boolean;
  /** Actions (by name) whose fulfil() writes no grant, as `noFulfilEffect` has it for `grant`. */
  noFulfilEffectFor?: string[];
  /** Actions (by name) given `ordering: 'independent'` in the kit. */
  independent?: string[];
  /** A second action with `destination: 'entered'` (writing the number as change_phone does), last of `actions`. */
  secondEntered?: string;
  /** The kit's start limits turned off, as the `noStartLimits` flaw has them. */
  noStartLimits?: boolean;
  /** The kit's `csrf` options (an app's own token check). */
  csrf?: VerificationKitOptions<unknown>['csrf'];
  /** Mounted right after the session middleware, before sign-in, the start and the kit. */
  before?: (app: express.Express, ctx: SampleContext) => void;
  /** Mounted at the landing path before the kit. */
  landing?: (ctx: SampleContext) => (req: Request, res: Response, next: NextFunction) => void | Promise<void>;
  /** The success page: true when it answered itself, false for the default page. */
  done?: (req: Request, res: Response, ctx: SampleContext) => boolean;
  /** The kit's onOutcome. */
  onOutcome?: VerificationKitOptions<unknown>['onOutcome'];
  /** The kit's destinationPolicy (its defaults otherwise). */
  destinationPolicy?: VerificationKitOptions<unknown>['destinationPolicy'];
}

export interface SampleApp {
  url: string;
  emulator: RunningEmulator;
  kit: VerificationKit<unknown>;
  grants(sessionId: string): number;
  logs: string[];
  clientId: string;
  clientSecret: string;
  /** Requests the off-origin "thank you" page received (`thanksElsewhere`). */
  elsewhereRequests: string[];
  /** `secretInBlob`: the base64 served, and where the secret's bytes start in what it encodes. */
  blob?: { base64: string; secretAt: number };
  /** The audit's options for this app (probe on `grants`, sweep on the shared clock, the logs). */
  auditOptions: AuditOptions;
  /** Stops the app's own server, as a crash would: connections to it are refused from then on. */
  stopServing(): Promise<void>;
  close(): Promise<void>;
}

const LANDING_PATH = '/verify/return';

function escapeHtml(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** The flawed landings, mounted before the kit at the landing path. */
function flawedLanding(
  flaw: Flaw | undefined,
  kit: VerificationKit<unknown>,
  grant: (id: string, user: string) => void,
  grantAgain: (id: string, user: string) => void,
  elsewhere: string,
) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const sessionId = typeof req.query.session_id === 'string' ? req.query.session_id : undefined;
    const state = typeof req.query.state === 'string' ? req.query.state : undefined;
    if (flaw === 'fulfilsOnArrival' && sessionId !== undefined && state !== undefined) {
      const attempt = await kit.store.findAttemptByState(state);
      if (attempt !== undefined && attempt.sessionId === sessionId) grant(sessionId, attempt.userRef);
    }
    if (flaw === 'skipsStateCheck' && sessionId !== undefined) {
      const attempt = await kit.store.findAttemptBySessionId(sessionId);
      if (attempt !== undefined) {
        req.url = `${LANDING_PATH}?session_id=${encodeURIComponent(sessionId)}&state=${encodeURIComponent(attempt.state)}`;
      }
    }
    if (flaw === 'grantsOnRedirect' && sessionId !== undefined) {
      const location = res.location.bind(res);
      res.location = (path: string) => {
        if (path.startsWith('/done')) grantAgain(sessionId, 'landing');
        return location(path);
      };
    }
    if (flaw === 'unknownLandsLatest' && sessionId !== undefined) {
      const user = (req.session as { user?: string } | undefined)?.user;
      if (user !== undefined && (await kit.store.findAttemptBySessionId(sessionId)) === undefined) {
        const latest = await newestAttempt(kit, user);
        if (latest !== undefined) {
          req.url = `${LANDING_PATH}?session_id=${encodeURIComponent(latest.sessionId)}&state=${encodeURIComponent(latest.state)}`;
        }
      }
    }
    if (flaw === 'landingSignsIn' && sessionId !== undefined) {
      const attempt = await kit.store.findAttemptBySessionId(sessionId);
      if (attempt !== undefined) (req.session as { user?: string }).user = attempt.userRef.replace(/^user-/, '');
    }
    if (flaw === 'thanksElsewhere' && sessionId !== undefined) {
      const location = res.location.bind(res);
      res.location = (path: string) => location(path.startsWith('/done') ? `${elsewhere}/thanks` : path);
    }
    if (flaw === 'nextRedirect' && typeof req.query.next === 'string') {
      const wanted = req.query.next;
      const location = res.location.bind(res);
      res.location = () => location(wanted);
    }
    next();
  };
}

/** A route's rejection goes to the app's error handler on Express 4 too (Express 5 forwards it itself). */
function forwarding(handler: (req: Request, res: Response, next: NextFunction) => unknown): RequestHandler {
  return (req, res, next) => {
    Promise.resolve(handler(req, res, next)).catch(next);
  };
}

/** The user's newest attempt (highest startSeq), as a support screen would list it. */
async function newestAttempt(kit: VerificationKit<unknown>, user: string) {
  const attempts = await kit.store.listAttempts({ userRef: userNamed(user).userRef, limit: 50 });
  return attempts.sort((a, b) => b.startSeq - a.startSeq)[0];
}

/** Express reads the client IP from `req.ip`; these flaws put a header's address there. */
function clientIpFrom(header: 'x-real-ip' | 'forwarded') {
  return (req: Request, _res: Response, next: NextFunction) => {
    const value = req.headers[header];
    const ip =
      typeof value !== 'string' ? undefined : header === 'x-real-ip' ? value : /for="?([^;,"]+)/i.exec(value)?.[1];
    if (ip !== undefined) Object.defineProperty(req, 'ip', { value: ip, configurable: true });
    next();
  };
}

type SessionData = { user?: string; next?: string; accountUnlocked?: boolean; sudoAt?: number };

/** The app's own routes behind the kit's step-up guard, with their flaws. */
function mountGuardedRoutes(
  app: express.Express,
  kit: VerificationKit<unknown>,
  flaw: Flaw | undefined,
  deps: { url: string; now: () => number; addPayee: (userRef: string, payee: string) => void },
): void {
  const session = (req: Request) => req.session as unknown as SessionData;
  if (flaw === 'methodCaseOverride') {
    app.use(['/account', '/payees'], express.urlencoded({ extended: false }), (req, _res, next) => {
      const override = (req.body as { _method?: unknown } | undefined)?._method;
      if (typeof override === 'string') req.method = override;
      next();
    });
  }
  // `sudoMode`: "verified in the last 10 minutes" kept in the session, whatever the route.
  const guarded = (guard: RequestHandler): RequestHandler =>
    flaw === 'methodCaseOverride'
      ? (req, res, next) => (UPPER_CASE_METHODS.includes(req.method) ? guard(req, res, next) : next())
      : flaw !== 'sudoMode'
        ? guard
        : (req, res, next) => {
            const at = session(req).sudoAt;
            if (at !== undefined && deps.now() - at < 600_000) return next();
            guard(req, res, (error?: unknown) => {
              if (error === undefined) session(req).sudoAt = deps.now();
              next(error);
            });
          };
  const accountGuard = guarded(kit.requireRecentVerification({ scope: 'see_account', maxAge: 600 }));
  if (flaw === 'verifiedAnywhere')
    app.get(
      '/account',
      verifiedAnywhere(kit, (req) => session(req).user),
    );
  app.get(
    '/account',
    (req, res, next) => {
      if (flaw === 'returnsToNext' && typeof req.query.next === 'string') session(req).next = req.query.next;
      if (flaw === 'accountUnlocked' && session(req).accountUnlocked === true) return next('route');
      if (flaw === 'textsOnGet') pressForTheUser(req, res, deps.url);
      next();
    },
    accountGuard,
    (req, _res, next) => {
      if (flaw === 'accountUnlocked') session(req).accountUnlocked = true;
      next('route');
    },
  );
  app.get('/account', (req, res) => {
    const wanted = session(req).next;
    if (flaw === 'returnsToNext' && wanted !== undefined) {
      delete session(req).next;
      res.redirect(wanted);
      return;
    }
    showAccount(res);
  });
  const payeeGuard = guarded(
    kit.requireRecentVerification({
      scope: 'add_payee',
      maxAge: 300,
      ...(flaw === 'noBindTo' ? {} : { bindTo: (req: Request) => (req.body as { payee?: string }).payee }),
    }),
  );
  app.post(
    '/payees',
    express.urlencoded({ extended: false }),
    (req, _res, next) => {
      const user = session(req).user;
      const payee = (req.body as { payee?: unknown }).payee;
      if (flaw === 'writesBeforeGuard' && user !== undefined && typeof payee === 'string') {
        deps.addPayee(userNamed(user).userRef, payee);
      }
      next();
    },
    ...(flaw === 'unguardedPost' ? [] : [flaw === 'grantShortcut' ? grantShortcut(kit, deps, payeeGuard) : payeeGuard]),
    (req, res) => {
      const user = session(req).user;
      const payee = (req.body as { payee?: unknown }).payee;
      if (user === undefined || typeof payee !== 'string' || !/^P\d{1,9}$/.test(payee)) {
        res.status(400).type('text').send('Bad payee');
        return;
      }
      deps.addPayee(userNamed(user).userRef, payee);
      res.redirect(303, flaw === 'redirectsBack' ? (req.get('referer') ?? '/payees') : '/payees');
    },
  );
  app.get('/payees', (_req, res) => {
    res.send('<!doctype html><title>Payees</title><p>Your payees.</p>');
  });
}

const UPPER_CASE_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** `verifiedAnywhere`: /account's content for a user who verified for it lately, in any browser. */
function verifiedAnywhere(kit: VerificationKit<unknown>, userOf: (req: Request) => string | undefined): RequestHandler {
  return (req, res, next) => {
    const user = userOf(req);
    if (user === undefined) return next();
    const search = { userRef: userNamed(user).userRef, outcome: 'fulfilled' as const, newerThanMs: 600_000 };
    kit.attempts.find(search).then((attempts) => {
      if (attempts.some((a) => a.action === 'see_account')) showAccount(res);
      else next();
    }, next);
  };
}

function showAccount(res: Response): void {
  res.setHeader('Cache-Control', 'no-store');
  res.send('<!doctype html><title>Account</title><p>Your account.</p>');
}

/** `grantShortcut`: the handler at once when the user holds a fresh grant for the payee; the guard otherwise. */
function grantShortcut(
  kit: VerificationKit<unknown>,
  deps: { now: () => number },
  guard: RequestHandler,
): RequestHandler {
  return (req, res, next) => {
    const user = (req.session as unknown as SessionData).user;
    const payee = (req.body as { payee?: unknown }).payee;
    if (user === undefined || typeof payee !== 'string') return guard(req, res, next);
    kit.grants.list({ userRef: userNamed(user).userRef, scope: 'add_payee' }).then((grants) => {
      const fresh = grants.some((g) => g.resourceKey === payee && deps.now() - g.startedAt <= 300_000);
      if (fresh) next();
      else guard(req, res, next);
    }, next);
  };
}

/** `textsOnGet`: when the guard answers "Confirm it's you", the app presses its button itself and shows the result. */
function pressForTheUser(req: Request, res: Response, url: string): void {
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  res.end = ((...args: unknown[]) => {
    const [chunk] = args;
    const body = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : '';
    const intent = /name="intent" value="([^"]*)"/.exec(body)?.[1];
    const csrf = /name="_csrf" value="([^"]*)"/.exec(body)?.[1];
    if (intent === undefined || csrf === undefined) return end(...args);
    fetch(`${url.replace('localhost', '127.0.0.1')}/verify/start`, {
      method: 'POST',
      headers: {
        cookie: req.headers.cookie ?? '',
        'content-type': 'application/x-www-form-urlencoded',
        origin: url,
        'sec-fetch-site': 'same-origin',
      },
      body: new URLSearchParams({ _csrf: csrf, action: 'see_account', intent }).toString(),
    }).then(
      async (answer) => {
        const page = await answer.text();
        res.statusCode = answer.status;
        res.removeHeader('Content-Length');
        end(page);
      },
      () => end(...args),
    );
    return res;
  }) as Response['end'];
}

export async function startSampleApp(chosen?: Flaw | CustomFlaw): Promise<SampleApp> {
  const flaw = typeof chosen === 'string' ? chosen : undefined;
  const custom: CustomFlaw = typeof chosen === 'object' ? chosen : {};
  const server: Server = createServer();
  // An IPv6 literal ([::1]) is listened on as that address; a name is served on 127.0.0.1.
  const literal = /^\[(.*)\]$/.exec(custom.appHost ?? '')?.[1];
  const port = await listen(server, literal === undefined ? {} : { host: literal });
  const url = `http://${custom.appHost ?? 'localhost'}:${port}`;
  const clientId = 'sample-client';
  const clientSecret =
    custom.secret ??
    (flaw === 'secretInBlob'
      ? randomBytes(8).toString('base64url').slice(0, 10)
      : `sample-${randomBytes(16).toString('hex')}${ESCAPED_SECRET_FLAWS.includes(flaw) ? '"<&/>' : ''}`);
  const elsewhereRequests: string[] = [];
  const settings = JSON.stringify({ clientId, clientSecret });
  const blob =
    flaw === 'secretInBlob' ? { base64: btoa(settings), secretAt: settings.indexOf(clientSecret) } : undefined;
  const elsewhereServer = createServer((req, res) => {
    elsewhereRequests.push(`${req.method} ${req.url} referer=${req.headers.referer ?? ''}`);
    res.end('thanks');
  });
  const elsewhere = `http://127.0.0.1:${await listen(elsewhereServer)}`;
  // One clock for the kit, the emulator and the audit's sweep check.
  const clock = createTestClock();
  const emulator = await startEmulator({
    port: 0,
    ...(custom.emulatorPageHost === undefined ? {} : { pageHost: custom.emulatorPageHost }),
    clients: [{ clientId, secret: clientSecret, returnUrl: `${url}${LANDING_PATH}` }],
    clock,
    log: () => {},
  });
  const db = new BetterSqlite3(':memory:');
  db.exec(
    'CREATE TABLE grants (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, user_ref TEXT NOT NULL)',
  );
  const insert = db.prepare('INSERT INTO grants (session_id, user_ref) VALUES (?, ?)');
  const count = db.prepare('SELECT COUNT(*) AS n FROM grants WHERE session_id = ?');
  const grants = (sessionId: string) => (count.get(sessionId) as { n: number }).n;
  db.exec('CREATE TABLE payees (id INTEGER PRIMARY KEY AUTOINCREMENT, user_ref TEXT NOT NULL, payee TEXT NOT NULL)');
  const addPayee = db.prepare('INSERT INTO payees (user_ref, payee) VALUES (?, ?)');
  const countPayees = db.prepare('SELECT COUNT(*) AS n FROM payees WHERE user_ref = ?');
  const payeesOf = (user: string) => (countPayees.get(userNamed(user).userRef) as { n: number }).n;
  db.exec('CREATE TABLE phones (user_ref TEXT PRIMARY KEY, phone TEXT NOT NULL)');
  const savePhone = db.prepare(
    'INSERT INTO phones (user_ref, phone) VALUES (?, ?) ON CONFLICT (user_ref) DO UPDATE SET phone = excluded.phone',
  );
  const readPhone = db.prepare('SELECT phone FROM phones WHERE user_ref = ?');
  const phoneOf = (userRef: string) => (readPhone.get(userRef) as { phone: string } | undefined)?.phone ?? null;
  const logs: string[] = [];
  const line = (level: string) => (obj: Record<string, unknown>, msg: string) =>
    logs.push(JSON.stringify({ level, ...obj, msg }));
  if (flaw === 'secretInLog') logs.push(JSON.stringify({ level: 'info', msg: 'config', clientId, clientSecret }));
  const successPath =
    flaw === 'secretInQuery'
      ? `/done?client_secret=${clientSecret}`
      : flaw === 'successGrantsBySessionId'
        ? (landed: { sessionId: string }) => `/done?session_id=${encodeURIComponent(landed.sessionId)}`
        : '/done';

  const kit = createVerificationKit<unknown>({
    baseUrl: emulator.url,
    clientId,
    clientSecret,
    returnUrl: `${url}${LANDING_PATH}`,
    store: createSqliteStore({ database: db }),
    now: clock.now,
    logger: { info: line('info'), warn: line('warn'), error: line('error') },
    landing: { pendingRechecks: 0, pendingRecheckIntervalMs: 0 },
    ...(flaw === 'noStartLimits' || custom.noStartLimits === true ? { dangerouslyDisableStartLimits: true } : {}),
    ...(custom.csrf === undefined ? {} : { csrf: custom.csrf }),
    ...(custom.onOutcome === undefined ? {} : { onOutcome: custom.onOutcome }),
    ...(custom.destinationPolicy === undefined ? {} : { destinationPolicy: custom.destinationPolicy }),
    ...(flaw === 'allowsPremiumRate' ? { destinationPolicy: { allowTypes: ['PREMIUM_RATE', 'SHARED_COST'] } } : {}),
    resolveUser: (req) => {
      const name = (req.session as { user?: string } | undefined)?.user;
      return name === undefined ? null : userNamed(name);
    },
    scopes: [
      { name: 'see_account', operationSensitivity: 'sensitive', label: 'see your account' },
      { name: 'add_payee', operationSensitivity: 'sensitive', label: 'add a payee' },
      { name: 'account_closing', operationSensitivity: 'sensitive', label: 'close your account' },
    ],
    actions: (
      [
        {
          name: 'grant',
          operationSensitivity: 'sensitive',
          successPath,
          fulfil: (_tx, attempt) => {
            if (flaw !== 'fulfilsOnArrival' && flaw !== 'grantsOnRedirect' && custom.noFulfilEffect !== true)
              insert.run(attempt.sessionId, attempt.userRef);
          },
        },
        {
          name: 'change_phone',
          operationSensitivity: 'sensitive',
          successPath: '/done',
          destination: 'entered',
          proves: 'destination',
          fulfil: (_tx, attempt) => {
            if (attempt.destination === null) throw new Error('no destination');
            savePhone.run(attempt.userRef, attempt.destination);
            insert.run(attempt.sessionId, attempt.userRef);
          },
        },
        {
          name: 'close_account',
          operationSensitivity: 'sensitive',
          successPath: '/done',
          ...(flaw === 'unguardedStart'
            ? {}
            : { requireRecentVerification: { scope: 'account_closing', maxAge: 600 } }),
          fulfil: (_tx, attempt) => {
            insert.run(attempt.sessionId, attempt.userRef);
          },
        },
        ...(custom.secondEntered === undefined
          ? []
          : [
              {
                name: custom.secondEntered,
                operationSensitivity: 'sensitive' as const,
                successPath: '/done',
                destination: 'entered' as const,
                proves: 'destination' as const,
                fulfil: (_tx: unknown, attempt: { sessionId: string; userRef: string; destination: string | null }) => {
                  if (attempt.destination === null) throw new Error('no destination');
                  savePhone.run(attempt.userRef, attempt.destination);
                  insert.run(attempt.sessionId, attempt.userRef);
                },
              },
            ]),
      ] satisfies ActionDefinition<unknown>[]
    ).map((action) => ({
      ...action,
      ...(custom.independent?.includes(action.name) === true ? { ordering: 'independent' as const } : {}),
      ...(custom.noFulfilEffectFor?.includes(action.name) === true ? { fulfil: () => undefined } : {}),
    })),
  });

  const ctx: SampleContext = {
    kit,
    url,
    clientId,
    clientSecret,
    insert: (sessionId, userRef) => void insert.run(sessionId, userRef),
    grants,
    savePhone: (userRef, phone) => void savePhone.run(userRef, phone),
    phoneOf,
    logs,
  };
  const app = express();
  const grant = (sessionId: string, userRef: string) => {
    if (grants(sessionId) === 0) insert.run(sessionId, userRef);
  };
  app.set('trust proxy', flaw === 'trustsAnyProxy' ? true : 'loopback');
  app.use(helmet());
  if (flaw === 'readsRealIp') app.use(clientIpFrom('x-real-ip'));
  if (flaw === 'readsForwarded') app.use(clientIpFrom('forwarded'));
  if (flaw === 'secretInHeader') {
    app.use((_req, res, next) => {
      res.setHeader('X-Debug-Client', Buffer.from(clientSecret).toString('base64'));
      next();
    });
  }
  if (flaw === 'cacheEverything') {
    app.use((_req, res, next) => {
      const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => Response;
      res.writeHead = ((...args: unknown[]) => {
        res.setHeader('Cache-Control', 'public, max-age=60');
        return writeHead(...args);
      }) as Response['writeHead'];
      next();
    });
  }
  if (flaw === 'stripsOrigin') {
    app.use((req, _res, next) => {
      delete req.headers.origin;
      delete req.headers['sec-fetch-site'];
      next();
    });
  }
  if (flaw === 'logsResponses') {
    app.use((req, res, next) => {
      const chunks: string[] = [];
      const keep = (chunk: unknown) => {
        if (typeof chunk === 'string' || Buffer.isBuffer(chunk)) chunks.push(String(chunk));
      };
      const write = res.write.bind(res) as (...args: unknown[]) => boolean;
      const end = res.end.bind(res) as (...args: unknown[]) => Response;
      res.write = ((...args: unknown[]) => {
        keep(args[0]);
        return write(...args);
      }) as Response['write'];
      res.end = ((...args: unknown[]) => {
        keep(args[0]);
        logs.push(JSON.stringify({ level: 'debug', url: req.url, body: chunks.join('') }));
        return end(...args);
      }) as Response['end'];
      next();
    });
  }
  app.use(
    session({
      name: 'sample.sid',
      secret: randomBytes(16).toString('hex'),
      resave: false,
      saveUninitialized: false,
      cookie:
        flaw === 'looseCookie'
          ? { httpOnly: false, sameSite: 'none', secure: 'auto' }
          : { httpOnly: true, sameSite: 'lax', secure: 'auto' },
    }),
  );
  custom.before?.(app, ctx);
  app.post('/login', express.urlencoded({ extended: false }), (req, res, next) => {
    const user = (req.body as { user?: unknown }).user;
    if (typeof user !== 'string' || !/^[a-z0-9]{1,40}$/.test(user)) {
      res.status(400).json({ error: 'user' });
      return;
    }
    const signIn = (error?: unknown) => {
      if (error) return next(error);
      (req.session as { user?: string }).user = user;
      res.setHeader('Cache-Control', 'no-store');
      res.json({ csrf: kit.csrfToken(req) });
    };
    // The flaw sets the user on the session the browser came with.
    if (flaw === 'keepsSessionOnSignIn') signIn();
    else req.session.regenerate(signIn);
  });
  if (flaw === 'fillsMissingToken') {
    app.post('/verify/start', express.urlencoded({ extended: false }), (req, _res, next) => {
      const body = req.body as Record<string, string>;
      body._csrf ??= kit.csrfToken(req);
      next();
    });
  }
  if (flaw === 'writesNumberAtStart') {
    // "Saved as unverified until the code is entered."
    app.post('/verify/start', express.urlencoded({ extended: false }), (req, _res, next) => {
      const { action, phone } = req.body as Record<string, unknown>;
      const user = (req.session as { user?: string }).user;
      if (action === 'change_phone' && typeof phone === 'string' && user !== undefined) {
        savePhone.run(userNamed(user).userRef, phone);
      }
      next();
    });
  }
  if (flaw === 'remembersTypedNumber') {
    // "So the success page can say which number was added."
    app.post('/verify/start', express.urlencoded({ extended: false }), (req, _res, next) => {
      const { action, phone } = req.body as Record<string, unknown>;
      if (action === 'change_phone' && typeof phone === 'string') (req.session as { phone?: string }).phone = phone;
      next();
    });
  }
  if (flaw === 'numberFromLanding') {
    // "The mobile app's deep link carries the new number": kept for the success page to save.
    app.get(LANDING_PATH, (req, _res, next) => {
      if (typeof req.query.phone === 'string') (req.session as { phone?: string }).phone = req.query.phone;
      next();
    });
  }
  if (flaw === 'remembersNext' || flaw === 'hopsToNext') {
    app.post('/verify/start', (req, _res, next) => {
      if (typeof req.query.next === 'string') (req.session as { next?: string }).next = req.query.next;
      next();
    });
  }
  if (flaw === 'bodyNext') {
    app.post('/verify/start', express.urlencoded({ extended: false }), (req, _res, next) => {
      const wanted = (req.body as Record<string, unknown>).returnTo;
      if (typeof wanted === 'string') (req.session as { next?: string }).next = wanted;
      next();
    });
  }
  if (flaw === 'remembersAnyNext') {
    app.use((req, _res, next) => {
      if (req.method === 'GET' && typeof req.query.return_to === 'string' && req.session !== undefined) {
        (req.session as { next?: string }).next = req.query.return_to;
      }
      next();
    });
  }
  if (flaw === 'getStartLink') {
    // "Verify now" links in our emails: the link starts the verification for the signed-in user.
    app.get('/verify/start', (req, _res, next) => {
      req.method = 'POST';
      req.body = { action: req.query.action, _csrf: kit.csrfToken(req) };
      req.headers['sec-fetch-site'] = 'same-origin';
      delete req.headers.origin;
      next();
    });
  }
  if (flaw === 'anyMethodStarts') {
    // "Our mobile client sends PUT": every method on the start path is the form's POST.
    app.all('/verify/start', (req, _res, next) => {
      if (req.method !== 'POST') {
        req.method = 'POST';
        if (req.headers['content-type'] === undefined) req.body = { ...req.query };
      }
      next();
    });
  }

  const done = forwarding(async (req, res) => {
    if (custom.done?.(req, res, ctx) === true) return;
    const remembered = (req.session as { next?: string }).next;
    const user = (req.session as { user?: string }).user;
    if (flaw === 'hopsToNext') {
      res.redirect('/welcome');
      return;
    }
    if (flaw === 'secretInBlob' && blob !== undefined) {
      // "The welcome page needs the client's settings."
      res.redirect(`/welcome?cfg=${blob.base64}`);
      return;
    }
    if (flaw === 'successGrantsBySessionId' && typeof req.query.session_id === 'string') {
      // "Just in case the landing missed it."
      const attempt = await kit.store.findAttemptBySessionId(req.query.session_id);
      if (attempt !== undefined) grant(attempt.sessionId, attempt.userRef);
    }
    if (flaw === 'successGrantsLatest' && user !== undefined) {
      const latest = await newestAttempt(kit, user);
      if (latest !== undefined) grant(latest.sessionId, latest.userRef);
    }
    if ((flaw === 'remembersNext' || flaw === 'bodyNext' || flaw === 'remembersAnyNext') && remembered !== undefined) {
      delete (req.session as { next?: string }).next;
      res.redirect(remembered);
      return;
    }
    const deepLinked = (req.session as { phone?: string }).phone;
    if (
      (flaw === 'numberFromLanding' || flaw === 'remembersTypedNumber') &&
      deepLinked !== undefined &&
      user !== undefined
    ) {
      delete (req.session as { phone?: string }).phone;
      savePhone.run(userNamed(user).userRef, deepLinked);
    }
    res.setHeader('Cache-Control', 'no-store');
    const phone = flaw === 'numberOnDonePage' && user !== undefined ? phoneOf(userNamed(user).userRef) : null;
    const meta = flaw === 'secretInPage' ? `<meta name="client" content="${escapeHtml(clientSecret)}">` : '';
    res.send(
      `<!doctype html><title>Done</title>${meta}<p>Done.</p>${phone === null ? '' : `<p>Your number is now ${escapeHtml(phone)}.</p>`}`,
    );
  });
  app.get('/done', done);
  app.get('/welcome', (_req, res) => res.redirect('/tour'));
  app.get('/tour', (_req, res) => res.redirect('/continue'));
  app.get('/continue', (req, res) => {
    const remembered = (req.session as { next?: string }).next;
    if (remembered === undefined) {
      res.send('<!doctype html><title>Welcome</title><p>Welcome.</p>');
      return;
    }
    delete (req.session as { next?: string }).next;
    res.redirect(remembered);
  });
  if (custom.landing !== undefined) app.get(LANDING_PATH, forwarding(custom.landing(ctx)));
  app.get(LANDING_PATH, forwarding(flawedLanding(flaw, kit, grant, (id, user) => insert.run(id, user), elsewhere)));
  mountGuardedRoutes(app, kit, flaw, { url, now: clock.now, addPayee: (user, payee) => addPayee.run(user, payee) });
  app.use(kit.router);
  server.on('request', app);

  const auditOptions: AuditOptions = {
    appUrl: url,
    emulatorUrl: emulator.url,
    clientId,
    clientSecret,
    signIn: async (agent, user) => {
      const answer = await agent.postForm('/login', { user });
      if (answer.status !== 200) throw new Error(`login answered ${answer.status}`);
      return JSON.parse(answer.body) as { csrf: string };
    },
    actions: [
      { name: 'grant' },
      { name: 'change_phone', enteredNumber: { numberOf: (user) => phoneOf(userNamed(user).userRef) } },
      { name: 'close_account', requireRecentVerification: { scope: 'account_closing', maxAge: 600 } },
      ...(custom.secondEntered === undefined
        ? []
        : [
            {
              name: custom.secondEntered,
              enteredNumber: { numberOf: (user: string) => phoneOf(userNamed(user).userRef) },
            },
          ]),
    ],
    kit,
    stepUp: [
      { path: '/account', scope: 'see_account', maxAge: 600 },
      {
        path: '/payees',
        method: 'POST',
        scope: 'add_payee',
        maxAge: 300,
        fields: (n) => ({ payee: `P${n}` }),
        resource: true,
        effects: payeesOf,
      },
    ],
    clock,
    probe: grants,
    sweep: { run: () => kit.runSweep({ owner: 'audit-sweep' }), clock },
    logs: () => logs,
    proxy: { headers: { 'x-forwarded-proto': 'https' } },
  };
  return {
    url,
    emulator,
    kit,
    grants,
    logs,
    clientId,
    clientSecret,
    elsewhereRequests,
    ...(blob === undefined ? {} : { blob }),
    auditOptions,
    stopServing: () => closeServer(server),
    async close() {
      await closeServer(server);
      await closeServer(elsewhereServer);
      await kit.close();
      await kit.store.close?.();
      await emulator.close();
      if (db.open) db.close();
    },
  };
}
