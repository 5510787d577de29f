// An Express app in TypeScript on PostgreSQL: it confirms the signed-in user's phone number by SMS,
// exactly once, on any number of instances sharing the database. No SQLite module is installed.
import express from 'express';
import session from 'express-session';
import type pg from 'pg';
import {
  createVerificationKit,
  maskDestination,
  verifyOptionsFromEnv,
  type VerificationKit,
} from 'hosted-sms-verify-kit';
import { createPostgresStore } from 'hosted-sms-verify-kit/postgres';
import type { PoolClient } from 'pg';

declare module 'express-session' {
  interface SessionData {
    userId: string;
  }
}

export interface AppOptions {
  pool: pg.Pool;
  env?: NodeJS.ProcessEnv;
  /** For tests: the clock they share with the emulator (createTestClock). */
  now?: () => number;
}

export interface App {
  app: express.Express;
  kit: VerificationKit<PoolClient>;
  close(): Promise<void>;
}

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The session cookie's signing key, from your secrets: a value written in code signs anyone's forged cookie. */
function sessionSecret(env: NodeJS.ProcessEnv): string {
  const secret = env.SESSION_SECRET ?? '';
  if (secret.length < 16) {
    throw new Error(
      'Set SESSION_SECRET to a long random value (e.g. `openssl rand -hex 32`): it signs the session cookie.',
    );
  }
  return secret;
}

/**
 * Login CSRF: another site's form must not sign the browser in as a user of its choosing, whose
 * number the victim would then confirm. Browsers say where a POST comes from (Sec-Fetch-Site, or
 * Origin); one from anywhere else is refused. A client that says neither is no browser: no victim's
 * cookie rides on it.
 */
function postedFromThisSite(req: express.Request): boolean {
  const site = req.get('sec-fetch-site');
  if (site !== undefined) return site === 'same-origin' || site === 'none';
  const origin = req.get('origin');
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === req.get('host');
  } catch {
    return false; // "null" (a sandboxed frame, a redirect from elsewhere)
  }
}

/** TRUST_PROXY as Express takes it: a hop count, or addresses (`loopback`); unset, no proxy is trusted. */
function trustProxy(env: NodeJS.ProcessEnv): number | string | false {
  const value = env.TRUST_PROXY?.trim();
  if (!value) return false;
  return /^\d+$/.test(value) ? Number(value) : value;
}

export async function createApp({ pool, env = process.env, now }: AppOptions): Promise<App> {
  const secret = sessionSecret(env); // before anything is written
  await pool.query(`CREATE TABLE IF NOT EXISTS users (id text PRIMARY KEY, phone text NOT NULL, phone_verified_at timestamptz);
    CREATE TABLE IF NOT EXISTS phone_confirmations (session_id text PRIMARY KEY, user_id text NOT NULL, phone text);
    INSERT INTO users (id, phone) VALUES ('alice', '+15550100001'), ('bob', '+15550100002') ON CONFLICT DO NOTHING`);
  const store = createPostgresStore({ pool });
  await store.ready; // migrations done: fail at startup rather than on the first request

  const kit = createVerificationKit<PoolClient>({
    ...verifyOptionsFromEnv(env),
    store,
    ...(now === undefined ? {} : { now }),
    // A number typed without "+" ("07400 123456") is read as a number of this country.
    defaultCountry: 'GB',
    resolveUser: async (req) => {
      const { rows } = await pool.query<{ id: string; phone: string }>('SELECT id, phone FROM users WHERE id = $1', [
        req.session.userId ?? '',
      ]);
      const user = rows[0];
      return user === undefined ? null : { userRef: user.id, destination: user.phone };
    },
    // What a user confirms (a code to their current number, or their passkey) before the number is changed (see change_phone).
    scopes: [{ name: 'phone_change', operationSensitivity: 'sensitive', label: 'change your phone number' }],
    actions: [
      {
        name: 'confirm_phone',
        operationSensitivity: 'normal',
        successPath: '/done',
        // Marking a number verified needs proof the user holds it: by default a passkey the hosted
        // page saved for the user (under any earlier number) answers instead of the texted code.
        proves: 'destination',
        // tx is the client inside the kit's BEGIN ... COMMIT: await every query on it, never on the pool.
        fulfil: async (tx, attempt) => {
          // The number the code went to, and only while it is still the user's: a confirmation that
          // lands after a change of number confirms nothing.
          const confirmed = await tx.query('UPDATE users SET phone_verified_at = now() WHERE id = $1 AND phone = $2', [
            attempt.userRef,
            attempt.destination,
          ]);
          if (confirmed.rowCount === 0) return;
          await tx.query('INSERT INTO phone_confirmations VALUES ($1, $2, $3)', [
            attempt.sessionId,
            attempt.userRef,
            attempt.destination,
          ]);
        },
      },
      {
        // Texts the number typed into the form's `phone` field; fulfil gets it as E.164.
        name: 'change_phone',
        operationSensitivity: 'sensitive',
        successPath: '/done',
        destination: 'entered',
        proves: 'destination',
        // A stolen session must not move every later code to another phone: the user first confirms
        // it's them, by a code to their current number or their passkey (within 10 minutes, in this
        // browser), then the new one.
        requireRecentVerification: { scope: 'phone_change', maxAge: 600 },
        fulfil: async (tx, attempt) => {
          await tx.query('UPDATE users SET phone = $1, phone_verified_at = now() WHERE id = $2', [
            attempt.destination,
            attempt.userRef,
          ]);
          await tx.query('INSERT INTO phone_confirmations VALUES ($1, $2, $3)', [
            attempt.sessionId,
            attempt.userRef,
            attempt.destination,
          ]);
        },
      },
    ],
  });

  const app = express();
  // Behind a TLS proxy, its hop count or address (TRUST_PROXY=1, or loopback): req.secure then
  // follows its X-Forwarded-Proto. Unset, nothing a client sends is believed.
  app.set('trust proxy', trustProxy(env));
  // Several instances need a session store they share (e.g. connect-pg-simple); the memory store is for one.
  app.use(
    session({
      name: 'app.sid',
      secret,
      resave: false,
      saveUninitialized: false,
      // Secure whenever the request came over https (behind a TLS proxy: once TRUST_PROXY names it).
      cookie: { sameSite: 'lax', httpOnly: true, secure: 'auto' },
    }),
  );
  app.use(kit.router); // POST /verify/start (parses its own form body) and GET /verify/return
  app.get('/', (req, res) => {
    const signIn = `<form method="post" action="/signin"><input name="user" value="alice"><button>Sign in</button></form>`;
    const confirm = `<form method="post" action="/verify/start">
      <input type="hidden" name="_csrf" value="${escape(kit.csrfToken(req))}">
      <button name="action" value="confirm_phone">Confirm your phone number</button></form>
      <form method="post" action="/verify/start">
      <input type="hidden" name="_csrf" value="${escape(kit.csrfToken(req))}">
      <input type="hidden" name="action" value="change_phone">
      <label for="phone">New phone number</label> <input id="phone" name="phone" type="tel" autocomplete="tel">
      <button>Change your phone number</button></form>`;
    res.type('html').send(req.session.userId === undefined ? signIn : confirm);
  });
  app.post('/signin', express.urlencoded({ extended: false }), (req, res, next) => {
    // Stands in for your own sign-in. A new session id first: a cookie someone planted before the
    // sign-in must not become the signed-in session (nor hold its step-up grants, kept by session).
    if (!postedFromThisSite(req)) return res.status(403).type('text').send('Sign in from this site.');
    // Express 5 leaves req.body undefined when no form was posted: refused, like an empty name.
    const userId: unknown = req.body?.user;
    if (typeof userId !== 'string' || userId === '') return res.status(400).type('text').send('Enter a user name.');
    req.session.regenerate((error) => {
      if (error) return next(error);
      req.session.userId = userId;
      // Saved before the redirect, so the next page finds the user.
      req.session.save((saveError) => (saveError ? next(saveError) : res.redirect(303, '/')));
    });
  });
  app.get('/done', (req, res, next) => {
    // Read back, never assumed: a confirmation that landed after a change of number confirmed nothing.
    pool
      .query<{ phone: string; verified: Date | null }>(
        'SELECT phone, phone_verified_at AS verified FROM users WHERE id = $1',
        [req.session.userId ?? ''],
      )
      .then(({ rows: [user] }) => {
        if (user === undefined) return res.redirect(303, '/');
        const said = user.verified === null ? 'Not confirmed' : 'Confirmed';
        res.type('html').send(`<p>${said}: your number ${escape(maskDestination(user.phone))}.</p>`);
      }, next);
  });
  app.get('/me', (req, res, next) => {
    // A failed query goes to Express's error handler (Express 4 leaves a rejected handler unhandled).
    pool
      .query(
        'SELECT session_id AS "sessionId", phone FROM phone_confirmations WHERE user_id = $1 ORDER BY session_id',
        [req.session.userId ?? ''],
      )
      .then(({ rows }: { rows: { sessionId: string; phone: string }[] }) => {
        // Masked as the kit shows numbers: a full number appears only in the form it is typed into.
        const confirmations = rows.map(({ sessionId, phone }) => ({ sessionId, phone: maskDestination(phone) }));
        res.json({ user: req.session.userId ?? null, confirmations });
      }, next);
  });

  return { app, kit, close: () => kit.close() };
}
