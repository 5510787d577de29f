// An integrator's Express app in plain Node ESM, using only what the packed tarball ships: the kit's
// routers mounted at '/', the packaged emulator as the service, and a user agent over real HTTP that
// goes through the hosted page with the texted code, lands, and then reloads the landing.
// Prints one JSON line of what it saw; the smoke test asserts on it.
import { createServer } from 'node:http';
import Database from 'better-sqlite3';
import express from 'express';
import session from 'express-session';
import { createVerificationKit } from 'hosted-sms-verify-kit';
import { createSqliteStore } from 'hosted-sms-verify-kit/sqlite';
import { startEmulator } from 'hosted-sms-verify-kit/testing';

const USER = { id: 'user-1', phone: '+15550100001' };
const CLIENT = { clientId: 'shop', secret: 'shop-secret-0123456789' };

const server = createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://localhost:${server.address().port}`;
const returnUrl = `${origin}/verify/return`;
const emulator = await startEmulator({ port: 0, clients: [{ ...CLIENT, returnUrl }], log: () => {} });

const db = new Database(':memory:');
db.exec('CREATE TABLE phone_confirmations (session_id TEXT PRIMARY KEY, user_id TEXT NOT NULL)');
const kit = createVerificationKit({
  baseUrl: emulator.url,
  clientId: CLIENT.clientId,
  clientSecret: CLIENT.secret,
  returnUrl,
  store: createSqliteStore({ database: db }),
  resolveUser: () => ({ userRef: USER.id, destination: USER.phone }),
  actions: [
    {
      name: 'confirm_phone',
      operationSensitivity: 'normal',
      successPath: '/done',
      fulfil: (tx, attempt) =>
        tx.prepare('INSERT INTO phone_confirmations VALUES (?, ?)').run(attempt.sessionId, attempt.userRef),
    },
  ],
});

const app = express();
app.use(session({ name: 'shop.sid', secret: 'a-long-random-session-secret', resave: false, saveUninitialized: false }));
app.get('/', (req, res) => {
  res.type('html').send(`<form method="post" action="/verify/start">
    <input type="hidden" name="_csrf" value="${kit.csrfToken(req)}">
    <button name="action" value="confirm_phone">Confirm your phone</button></form>`);
});
app.use(kit.router);
app.get('/done', (_req, res) => res.send('Phone confirmed'));
server.on('request', app);

const decodeAttr = (value) => value.replaceAll('&quot;', '"').replaceAll('&#39;', "'").replaceAll('&amp;', '&');
const attr = (html, pattern, what) => {
  const match = pattern.exec(html);
  if (match === null) throw new Error(`no ${what} in: ${html.slice(0, 300)}`);
  return decodeAttr(match[1]);
};
const cookies = new Map();
async function browse(url, init = {}) {
  const target = new URL(url);
  const headers = new Headers(init.headers);
  const jar = cookies.get(target.host);
  if (jar !== undefined) headers.set('cookie', [...jar.values()].join('; '));
  const response = await fetch(target, { ...init, headers, redirect: 'manual' });
  for (const line of response.headers.getSetCookie()) {
    const pair = line.split(';')[0];
    if (!cookies.has(target.host)) cookies.set(target.host, new Map());
    cookies.get(target.host).set(pair.split('=')[0], pair);
  }
  return response;
}
const postForm = (url, fields, headers = {}) =>
  browse(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  });
const fulfilments = () => db.prepare('SELECT count(*) AS n FROM phone_confirmations').get().n;

try {
  const home = await (await browse(`${origin}/`)).text();
  const csrf = attr(home, /name="_csrf" value="([^"]+)"/, 'CSRF token');
  const start = await postForm(
    `${origin}/verify/start`,
    { _csrf: csrf, action: 'confirm_phone' },
    { origin, 'sec-fetch-site': 'same-origin' },
  );
  const autoSubmit = await start.text();
  const verifyUrl = attr(autoSubmit, /<form[^>]* action="([^"]+)"/, 'verifyUrl');
  const hx = attr(autoSubmit, /name="hx" value="([^"]+)"/, 'handoff');

  const hosted = await (await postForm(verifyUrl, { hx })).text();
  const codeForm = /<form[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/g;
  const form = [...hosted.matchAll(codeForm)].find((match) => match[2].includes('name="code"'));
  if (form === undefined) throw new Error(`no code form on the hosted page: ${hosted.slice(0, 300)}`);
  const hidden = Object.fromEntries(
    [...form[2].matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1], decodeAttr(m[2])]),
  );
  const code = await emulator.control.latestCode({ destination: USER.phone });
  const submitted = await postForm(new URL(decodeAttr(form[1]), verifyUrl).href, { ...hidden, code });
  const landingUrl = submitted.headers.get('location');

  const landing = await browse(landingUrl);
  const afterLanding = fulfilments();
  const reload = await browse(landingUrl);
  console.log(
    JSON.stringify({
      startStatus: start.status,
      startCacheControl: start.headers.get('cache-control'),
      codeStatus: submitted.status,
      landingUrlStartsWithReturnUrl: landingUrl.startsWith(`${returnUrl}?`),
      landing: { status: landing.status, location: landing.headers.get('location') },
      reload: { status: reload.status, location: reload.headers.get('location') },
      fulfilmentsAfterLanding: afterLanding,
      fulfilmentsAfterReload: fulfilments(),
      smsSent: (await emulator.control.stats()).smsSent,
    }),
  );
} finally {
  await kit.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await emulator.close();
  db.close();
}
