// A minimal Express app that confirms the signed-in user's phone number by SMS, exactly once.
import express from 'express';
import session from 'express-session';
import { createVerificationKit, maskDestination } from 'hosted-sms-verify-kit';
import verificationOptions from './verify.config.js';

const escape = (text) => String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The session cookie's signing key, from your secrets: a value written in code signs anyone's forged cookie. */
function sessionSecret(env) {
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
function postedFromThisSite(req) {
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
function trustProxy(env) {
  const value = env.TRUST_PROXY?.trim();
  if (!value) return false;
  return /^\d+$/.test(value) ? Number(value) : value;
}

/** `now` is for tests: the clock they share with the emulator (createTestClock). */
export function createApp({ env = process.env, now } = {}) {
  const secret = sessionSecret(env); // before anything is opened
  const options = verificationOptions(env);
  const db = options.store.db;
  const kit = createVerificationKit({
    ...options,
    // What a user confirms (a code to their current number, or their passkey) before it is changed (change_phone requires it).
    scopes: [{ name: 'phone_change', operationSensitivity: 'sensitive', label: 'change your phone number' }],
    ...(now === undefined ? {} : { now }),
  });

  const app = express();
  // Behind a TLS proxy, its hop count or address (TRUST_PROXY=1, or loopback): req.secure then
  // follows its X-Forwarded-Proto. Unset, nothing a client sends is believed.
  app.set('trust proxy', trustProxy(env));
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
    const userId = req.body?.user;
    if (typeof userId !== 'string' || userId === '') return res.status(400).type('text').send('Enter a user name.');
    req.session.regenerate((error) => {
      if (error) return next(error);
      req.session.userId = userId;
      // Saved before the redirect, so the next page finds the user.
      req.session.save((saveError) => (saveError ? next(saveError) : res.redirect(303, '/')));
    });
  });
  app.get('/done', (req, res) => {
    // Read back, never assumed: a confirmation that landed after a change of number confirmed nothing.
    const user = db.prepare('SELECT phone, phone_verified_at FROM users WHERE id = ?').get(req.session.userId ?? '');
    if (user === undefined) return res.redirect(303, '/');
    const said = user.phone_verified_at === null ? 'Not confirmed' : 'Confirmed';
    res.type('html').send(`<p>${said}: your number ${escape(maskDestination(user.phone))}.</p>`);
  });
  app.get('/me', (req, res) => {
    // Numbers are masked as the kit shows them: a full number appears only in the form it is typed into.
    const confirmations = db
      .prepare('SELECT session_id AS sessionId, phone FROM phone_confirmations WHERE user_id = ?')
      .all(req.session.userId ?? '')
      .map(({ sessionId, phone }) => ({ sessionId, phone: maskDestination(phone) }));
    const phone = db.prepare('SELECT phone FROM users WHERE id = ?').get(req.session.userId ?? '')?.phone;
    res.json({
      user: req.session.userId ?? null,
      phone: phone === undefined ? null : maskDestination(phone),
      confirmations,
    });
  });

  app.locals.kit = kit;
  app.locals.close = async () => {
    await kit.close();
    await options.store.close();
  };
  return app;
}
