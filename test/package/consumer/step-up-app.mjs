// An integrator guards two routes of its own with the step-up guard, from the packed tarball: a
// page (GET) and a form it handles itself (POST, bound to the account). A test browser gets each
// grant through the real flow with `verifyStepUp`. Prints one JSON line of what it saw.
import { createServer } from 'node:http';
import Database from 'better-sqlite3';
import express from 'express';
import session from 'express-session';
import { createVerificationKit } from 'hosted-sms-verify-kit';
import { createSqliteStore } from 'hosted-sms-verify-kit/sqlite';
import { createTestBrowser, createTestClock, startEmulator, verifyStepUp } from 'hosted-sms-verify-kit/testing';

const CLIENT = { clientId: 'shop', secret: 'shop-secret-0123456789abcdef' };
const server = createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const appUrl = `http://localhost:${server.address().port}`;
const clock = createTestClock();
const emulator = await startEmulator({
  port: 0,
  clients: [{ ...CLIENT, returnUrl: `${appUrl}/verify/return` }],
  clock,
  log: () => {},
});

const kit = createVerificationKit({
  baseUrl: emulator.url,
  clientId: CLIENT.clientId,
  clientSecret: CLIENT.secret,
  returnUrl: `${appUrl}/verify/return`,
  now: clock.now,
  store: createSqliteStore({ database: new Database(':memory:') }),
  resolveUser: (req) => (req.session.user ? { userRef: req.session.user, destination: '+15550100001' } : null),
  actions: [{ name: 'confirm_phone', operationSensitivity: 'normal', successPath: '/', fulfil: () => {} }],
  scopes: [
    { name: 'security', operationSensitivity: 'sensitive', label: 'see your recovery codes' },
    { name: 'api_keys', operationSensitivity: 'sensitive', label: 'create an API key' },
  ],
});

const created = [];
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
    res.json({ ok: true });
  });
});
app.get('/security', kit.requireRecentVerification({ scope: 'security', maxAge: 600 }), (_req, res) =>
  res.send('<h1>Your recovery codes</h1>'),
);
app.post(
  '/accounts/:account/keys',
  express.urlencoded({ extended: false }),
  kit.requireRecentVerification({ scope: 'api_keys', maxAge: 300, bindTo: (req) => req.params.account }),
  (req, res) => {
    created.push({ account: req.params.account, name: req.body.name });
    res.send('<h1>Key created</h1>');
  },
);
app.use(kit.router);
server.on('request', app);

try {
  const browser = createTestBrowser();
  await browser.post(`${appUrl}/login`, { user: 'ada' }, appUrl);
  const page = await verifyStepUp(`${appUrl}/security`, { browser, emulator });
  const kept = await browser.post(`${appUrl}/accounts/acct-1/keys`, { name: 'ci' }, `${appUrl}/keys`);
  const confirmation = await verifyStepUp(kept, { browser, emulator });
  const createdBeforeConfirm = created.length;
  const done = await browser.submitForm(confirmation.page);
  const again = await browser.submitForm(confirmation.page);
  console.log(
    JSON.stringify({
      pageOpened: page.page.html.includes('Your recovery codes'),
      createdBeforeConfirm,
      confirmed: done.html.includes('Key created'),
      replayStatus: again.status,
      created,
      grants: (await kit.grants.list({ userRef: 'ada' })).map((g) => g.scope).sort(),
    }),
  );
} finally {
  await kit.close();
  await emulator.close();
  server.close();
}
