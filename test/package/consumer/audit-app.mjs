// An integrator runs the integration audit from the packed tarball against its own small app:
// sign-in by name, one guarded action writing a row, one that makes a typed number the user's, the sweep on the clock the kit and the emulator share,
// and two routes of its own behind the step-up guard (a page, and a form whose handler writes a row).
// Prints one JSON line: whether every check passed, which failed or were not run, and how effects were counted.
import { createServer } from 'node:http';
import Database from 'better-sqlite3';
import express from 'express';
import session from 'express-session';
import { createVerificationKit } from 'hosted-sms-verify-kit';
import { createSqliteStore } from 'hosted-sms-verify-kit/sqlite';
import { auditIntegration, createTestClock, failedIds, notRunIds, startEmulator } from 'hosted-sms-verify-kit/testing';

const CLIENT = { clientId: 'shop', secret: 'shop-secret-0123456789abcdef' };
const server = createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const appUrl = `http://localhost:${server.address().port}`;
const returnUrl = `${appUrl}/verify/return`;
const clock = createTestClock();
const emulator = await startEmulator({ port: 0, clients: [{ ...CLIENT, returnUrl }], clock, log: () => {} });

const db = new Database(':memory:');
db.exec('CREATE TABLE confirmations (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, user_id TEXT NOT NULL)');
db.exec('CREATE TABLE phones (user_id TEXT PRIMARY KEY, phone TEXT NOT NULL)');
db.exec('CREATE TABLE api_keys (id INTEGER PRIMARY KEY, user_id TEXT NOT NULL, name TEXT NOT NULL)');
const phoneOf = (name) => `+1555${String(parseInt(name.replace(/\D/g, '').slice(-7) || '0', 10)).padStart(7, '0')}`;
const kit = createVerificationKit({
  baseUrl: emulator.url,
  clientId: CLIENT.clientId,
  clientSecret: CLIENT.secret,
  returnUrl,
  now: clock.now,
  store: createSqliteStore({ database: db }),
  resolveUser: (req) =>
    req.session.user ? { userRef: req.session.user, destination: phoneOf(req.session.user) } : null,
  scopes: [
    { name: 'security', operationSensitivity: 'sensitive', label: 'see your recovery codes' },
    { name: 'api_keys', operationSensitivity: 'sensitive', label: 'add an API key' },
    { name: 'phone_change', operationSensitivity: 'sensitive', label: 'change your phone number' },
  ],
  actions: [
    {
      name: 'confirm_phone',
      operationSensitivity: 'normal',
      successPath: '/done',
      fulfil: (tx, attempt) =>
        tx
          .prepare('INSERT INTO confirmations (session_id, user_id) VALUES (?, ?)')
          .run(attempt.sessionId, attempt.userRef),
    },
    {
      name: 'change_phone',
      operationSensitivity: 'sensitive',
      successPath: '/done',
      destination: 'entered',
      proves: 'destination',
      // As the docs' recipe: a stolen session cannot move the number without the current one.
      requireRecentVerification: { scope: 'phone_change', maxAge: 600 },
      fulfil: (tx, attempt) => {
        tx.prepare(
          'INSERT INTO phones (user_id, phone) VALUES (?, ?) ON CONFLICT (user_id) DO UPDATE SET phone = excluded.phone',
        ).run(attempt.userRef, attempt.destination);
        tx.prepare('INSERT INTO confirmations (session_id, user_id) VALUES (?, ?)').run(
          attempt.sessionId,
          attempt.userRef,
        );
      },
    },
  ],
});

const app = express();
app.use(
  session({
    name: 'shop.sid',
    secret: 'a-long-random-session-secret',
    resave: false,
    saveUninitialized: false,
    cookie: { httpOnly: true, sameSite: 'lax', secure: 'auto' },
  }),
);
app.post('/login', express.urlencoded({ extended: false }), (req, res, next) => {
  // A new session id at sign-in: a cookie planted before it never becomes the signed-in session.
  req.session.regenerate((error) => {
    if (error) return next(error);
    req.session.user = String(req.body.user);
    res.json({ csrf: kit.csrfToken(req) });
  });
});
app.use(kit.router);
app.get('/done', (_req, res) => res.send('Phone confirmed'));
app.get('/security', kit.requireRecentVerification({ scope: 'security', maxAge: 600 }), (_req, res) => {
  res.send('Your recovery codes');
});
app.post(
  '/api-keys',
  express.urlencoded({ extended: false }),
  kit.requireRecentVerification({ scope: 'api_keys', maxAge: 300 }),
  (req, res) => {
    db.prepare('INSERT INTO api_keys (user_id, name) VALUES (?, ?)').run(req.session.user, String(req.body.name));
    res.redirect(303, '/security');
  },
);
server.on('request', app);

try {
  const report = await auditIntegration({
    appUrl,
    emulatorUrl: emulator.url,
    clientId: CLIENT.clientId,
    clientSecret: CLIENT.secret,
    signIn: async (agent, user) => JSON.parse((await agent.postForm('/login', { user })).body),
    actions: [
      { name: 'confirm_phone' },
      {
        name: 'change_phone',
        requireRecentVerification: { scope: 'phone_change', maxAge: 600 },
        enteredNumber: {
          numberOf: (user) => db.prepare('SELECT phone FROM phones WHERE user_id = ?').get(user)?.phone ?? null,
        },
      },
    ],
    probe: (sessionId) => db.prepare('SELECT count(*) AS n FROM confirmations WHERE session_id = ?').get(sessionId).n,
    kit,
    sweep: { run: () => kit.runSweep(), clock },
    stepUp: [
      { path: '/security', scope: 'security', maxAge: 600 },
      {
        path: '/api-keys',
        method: 'POST',
        scope: 'api_keys',
        maxAge: 300,
        fields: { name: 'ci' },
        effects: (user) => db.prepare('SELECT count(*) AS n FROM api_keys WHERE user_id = ?').get(user).n,
      },
    ],
  });
  console.log(
    JSON.stringify({
      ok: report.ok,
      failed: failedIds(report),
      notRun: notRunIds(report),
      counting: report.counting,
      checks: report.checks.length,
    }),
  );
} finally {
  server.close();
  server.closeAllConnections();
  await kit.close();
  await emulator.close();
}
