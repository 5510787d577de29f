// The app's verification, end to end over HTTP, with only the kit's public `testing` entry:
// the emulator stands in for the service, a test browser walks its hosted page, and the clock
// the kit and the emulator share moves the sweep forward without sleeping. Last, the kit's
// integration audit attacks the running app, each check a test case.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it, test } from 'node:test';
import Database from 'better-sqlite3';
import {
  createTestBrowser,
  createTestClock,
  describeAudit,
  startEmulator,
  verifyStepUp,
  walkHostedPage,
} from 'hosted-sms-verify-kit/testing';
import { createApp } from '../app.js';

const CLIENT = { clientId: 'example-app', secret: 'example-secret-0123456789' };
const dir = mkdtempSync(join(tmpdir(), 'verify-example-'));
const server = createServer();
const clock = createTestClock();
let origin;
let emulator;
let app;
let db;
let env;

before(async () => {
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://localhost:${server.address().port}`;
  const returnUrl = `${origin}/verify/return`;
  // A host name, not an IP, so the hosted page offers passkeys (WebAuthn needs a name).
  emulator = await startEmulator({
    port: 0,
    pageHost: 'localhost',
    clients: [{ ...CLIENT, returnUrl }],
    clock,
    log: () => {},
  });
  env = {
    VERIFY_BASE_URL: emulator.url,
    VERIFY_CLIENT_ID: CLIENT.clientId,
    VERIFY_CLIENT_SECRET: CLIENT.secret,
    VERIFY_RETURN_URL: returnUrl,
    DATABASE_PATH: join(dir, 'app.sqlite'),
    SESSION_SECRET: 'a-test-session-secret',
  };
  app = createApp({ env, now: clock.now });
  server.on('request', app);
});
after(async () => {
  db?.close();
  await app.locals.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await emulator.close();
  rmSync(dir, { recursive: true, force: true });
});

test('refuses to start without a SESSION_SECRET of its own: a cookie key written in the code would sign forged cookies', () => {
  const { SESSION_SECRET: _, ...withoutSecret } = env;
  for (const given of [{}, { SESSION_SECRET: 'short' }]) {
    assert.throws(() => createApp({ env: { ...withoutSecret, ...given }, now: clock.now }), /SESSION_SECRET/);
  }
});

/** The session cookie (`app.sid=...`) an answer sets, if any. */
const sessionCookieOf = (answer) =>
  answer.headers
    .getSetCookie()
    .map((line) => line.split(';')[0])
    .find((pair) => pair.startsWith('app.sid='));
const signInWith = (user, cookie) =>
  fetch(`${origin}/signin`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie === undefined ? {} : { cookie }) },
    body: new URLSearchParams({ user }),
  });
const signedInUserOf = async (cookie) => (await (await fetch(`${origin}/me`, { headers: { cookie } })).json()).user;

test('signing in starts a new session: a cookie an attacker planted before the sign-in is not signed in after it', async () => {
  // The attacker gets a session cookie of the app (here by signing in as themselves) and plants it
  // in the victim's browser, who then signs in with it.
  const planted = sessionCookieOf(await signInWith('mallory'));
  assert.ok(planted);
  const victim = await signInWith('alice', planted);
  assert.equal(victim.status, 303);
  // The planted cookie names no signed-in session (nor the victim's step-up grants, kept by session).
  assert.equal(await signedInUserOf(planted), null);
  const victimCookie = sessionCookieOf(victim);
  assert.ok(victimCookie);
  assert.notEqual(victimCookie, planted);
  assert.equal(await signedInUserOf(victimCookie), 'alice');
});

test("a sign-in posted from another site's page is refused with 403 and signs no one in (login CSRF); one from the app's own page signs in", async () => {
  const signInAsMallory = (headers) =>
    fetch(`${origin}/signin`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams({ user: 'mallory' }),
    });
  for (const headers of [
    { origin: 'https://attacker.example' },
    { origin: 'null' },
    { 'sec-fetch-site': 'cross-site', origin: 'https://attacker.example' },
    { 'sec-fetch-site': 'same-site', origin: 'http://other.localhost' },
  ]) {
    const answer = await signInAsMallory(headers);
    assert.equal(answer.status, 403, JSON.stringify(headers));
    assert.equal(sessionCookieOf(answer), undefined, JSON.stringify(headers));
  }
  for (const headers of [{ origin }, { 'sec-fetch-site': 'same-origin', origin }]) {
    const answer = await signInAsMallory(headers);
    assert.equal(answer.status, 303, JSON.stringify(headers));
    const cookie = sessionCookieOf(answer);
    assert.ok(cookie);
    assert.equal(await signedInUserOf(cookie), 'mallory');
  }
});

test("behind a TLS proxy the app trusts (TRUST_PROXY), the session cookie is Secure; a client's own X-Forwarded-Proto changes nothing", async () => {
  const signInVia = async (appEnv) => {
    const proxied = createApp({ env: appEnv, now: clock.now });
    const front = createServer(proxied);
    await new Promise((resolve) => front.listen(0, '127.0.0.1', resolve));
    try {
      const answer = await fetch(`http://127.0.0.1:${front.address().port}/signin`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-proto': 'https' },
        body: new URLSearchParams({ user: 'alice' }),
      });
      return answer.headers.getSetCookie().find((line) => line.startsWith('app.sid='));
    } finally {
      await proxied.locals.close();
      front.closeAllConnections();
      await new Promise((resolve) => front.close(resolve));
    }
  };
  assert.match(await signInVia({ ...env, TRUST_PROXY: 'loopback' }), /;\s*Secure/i);
  assert.doesNotMatch(await signInVia(env), /;\s*Secure/i);
});

test('a sign-in without a user name gets a 400 that says so, and no session', async () => {
  const posts = [
    { headers: {} }, // no form at all: Express 5 leaves req.body undefined
    { headers: { 'content-type': 'application/json' }, body: '{"user":"alice"}' },
    { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'user=' },
  ];
  for (const post of posts) {
    const answer = await fetch(`${origin}/signin`, { method: 'POST', redirect: 'manual', ...post });
    const text = await answer.text();
    assert.equal(answer.status, 400, text);
    assert.match(text, /user name/);
    assert.doesNotMatch(text, /Error|at .*\.js/); // no stack
    assert.equal(sessionCookieOf(answer), undefined);
  }
});

/** A signed-in browser that has pressed "Confirm your phone number": the kit's auto-submit page. */
async function startConfirming(browser, user = 'alice') {
  const signedIn = await browser.submitForm(await browser.get(`${origin}/`), { user });
  return browser.submitForm(await browser.get(signedIn.location), {}, { action: '/verify/start' });
}
const confirmations = async (browser) => JSON.parse((await browser.get(`${origin}/me`)).html).confirmations;

test('a landing fulfils once, and a reload of it fulfils nothing more', async () => {
  const browser = createTestBrowser();
  const walked = await walkHostedPage(await startConfirming(browser), { emulator, browser });
  const landing = await browser.get(walked.landingUrl);
  assert.equal(landing.status, 303);
  assert.equal(landing.location, `${origin}/done`);
  assert.deepEqual(await confirmations(browser), [{ sessionId: walked.sessionId, phone: '••\u00a001' }]);

  const reload = await browser.get(walked.landingUrl);
  assert.equal(reload.location, `${origin}/done`);
  assert.equal((await confirmations(browser)).length, 1);
});

test('wrong codes end the verification failed, and the landing fulfils nothing', async () => {
  const browser = createTestBrowser();
  const walked = await walkHostedPage(await startConfirming(browser, 'bob'), { emulator, browser, code: 'wrong' });
  assert.equal(walked.outcome, 'failed');
  const landing = await browser.get(walked.landingUrl);
  // The kit's failure page (not its "still confirming" page), with a way to start again.
  assert.equal(landing.status, 200);
  assert.match(landing.html, /<h1>Too many incorrect codes<\/h1>/);
  assert.match(landing.html, /Start a new verification/);
  const attempt = await app.locals.kit.attempts.get(walked.sessionId);
  assert.equal(attempt?.outcome, 'failed');
  assert.equal(attempt?.reason, 'otp_locked');
  assert.equal((await confirmations(browser)).length, 0);
});

test('a closed tab is fulfilled by the sweep once the shared clock passes its first check', async () => {
  const browser = createTestBrowser();
  const started = await startConfirming(browser);
  const before = (await confirmations(browser)).length;
  const walked = await walkHostedPage(started, { emulator, browser });
  // The user closes the tab: nobody opens walked.landingUrl.
  assert.equal((await app.locals.kit.runSweep()).fulfilled, 0); // not due yet
  clock.advance({ seconds: 181 });
  assert.equal((await app.locals.kit.runSweep()).fulfilled, 1);
  assert.equal((await confirmations(browser)).length, before + 1);
  // Landing late changes nothing.
  assert.equal((await browser.get(walked.landingUrl)).location, `${origin}/done`);
  assert.equal((await confirmations(browser)).length, before + 1);
});

test('confirming a number proves that number: a passkey saved while confirming the old one does not confirm a new one', async () => {
  db ??= new Database(join(dir, 'app.sqlite'));
  db.prepare("INSERT INTO users (id, phone) VALUES ('carol', '+15550100003')").run();
  const browser = createTestBrowser();
  const first = await walkHostedPage(await startConfirming(browser, 'carol'), {
    emulator,
    browser,
    passkeyOffer: 'save',
  });
  assert.equal((await browser.get(first.landingUrl)).location, `${origin}/done`);
  // Carol's number is changed outside this app's change_phone (by support, an import).
  db.prepare("UPDATE users SET phone = '+15550100033', phone_verified_at = NULL WHERE id = 'carol'").run();
  const home = await browser.get(`${origin}/`);
  const second = await walkHostedPage(await browser.submitForm(home, {}, { action: '/verify/start' }), {
    emulator,
    browser,
  });
  assert.equal(second.via, 'sms'); // the old number's passkey is not taken for the new one
  const texted = (await emulator.control.sentMessages()).filter((sms) => sms.sessionId === second.sessionId);
  assert.deepEqual(
    texted.map((sms) => sms.to),
    ['+15550100033'],
  );
  await browser.get(second.landingUrl);
  assert.equal((await browser.get(`${origin}/done`)).html, '<p>Confirmed: your number ••\u00a033.</p>');
  assert.notEqual(db.prepare("SELECT phone_verified_at FROM users WHERE id = 'carol'").get().phone_verified_at, null);
});

test('a confirmation that lands after the number changed confirms nothing: the new number stays unconfirmed', async () => {
  db ??= new Database(join(dir, 'app.sqlite'));
  db.prepare("INSERT INTO users (id, phone) VALUES ('dan', '+15550100004')").run();
  const browser = createTestBrowser();
  const walked = await walkHostedPage(await startConfirming(browser, 'dan'), { emulator, browser });
  db.prepare("UPDATE users SET phone = '+15550100044' WHERE id = 'dan'").run();
  assert.equal((await browser.get(walked.landingUrl)).location, `${origin}/done`);
  // The page it lands on reads the number back, and does not say it was confirmed.
  assert.equal((await browser.get(`${origin}/done`)).html, '<p>Not confirmed: your number ••\u00a044.</p>');
  assert.deepEqual(db.prepare("SELECT phone_verified_at FROM users WHERE id = 'dan'").get(), {
    phone_verified_at: null,
  });
  assert.deepEqual(await confirmations(browser), []);
});

test('a change of number asks the user to confirm it is them first: a start alone texts the new number nothing', async () => {
  const browser = createTestBrowser();
  const home = await browser.get((await browser.submitForm(await browser.get(`${origin}/`), { user: 'bob' })).location);
  const sent = (await emulator.control.stats()).smsSent;
  const answer = await browser.submitForm(
    home,
    { action: 'change_phone', phone: '07400 654321' },
    { action: '/verify/start' },
  );
  assert.match(answer.html, /Confirm it/);
  assert.equal((await emulator.control.stats()).smsSent, sent);
});

test("a typed number is texted, verified and becomes the user's number, once", async () => {
  const browser = createTestBrowser();
  const home = await browser.get((await browser.submitForm(await browser.get(`${origin}/`), { user: 'bob' })).location);
  // Not a number: the kit's own form comes back (422) with the value typed, and nothing is sent.
  const changePhone = (phone) =>
    browser.submitForm(home, { action: 'change_phone', phone }, { action: '/verify/start' });
  const refused = await changePhone('12');
  assert.equal(refused.status, 422);
  assert.match(refused.html, /not a phone number we can text/);
  // The user first confirms it's them on the current number; then the kept start is confirmed and
  // a national number of the default country (GB) is texted as E.164.
  const kept = await changePhone('07400 123456');
  const { page: confirmStart } = await verifyStepUp(kept, { browser, emulator });
  const started = await browser.submitForm(confirmStart);
  const walked = await walkHostedPage(started, { emulator, browser });
  assert.equal((await browser.get(walked.landingUrl)).location, `${origin}/done`);
  // The app holds the full number; its pages and JSON show it masked, as the kit does.
  db ??= new Database(join(dir, 'app.sqlite'));
  assert.equal(db.prepare('SELECT phone FROM users WHERE id = ?').get('bob').phone, '+447400123456');
  assert.deepEqual(db.prepare('SELECT session_id, phone FROM phone_confirmations WHERE user_id = ?').all('bob'), [
    { session_id: walked.sessionId, phone: '+447400123456' },
  ]);
  const me = await browser.get(`${origin}/me`);
  assert.deepEqual(JSON.parse(me.html), {
    user: 'bob',
    phone: '••\u00a056',
    confirmations: [{ sessionId: walked.sessionId, phone: '••\u00a056' }],
  });
  assert.doesNotMatch(me.html, /7400123456/);
});

/** A phone number of the audit's own for each user it signs in (any name works, as a digit string). */
const phoneOf = (name) => `+1555${String(parseInt(name.replace(/\D/g, '').slice(-7) || '0', 10)).padStart(7, '0')}`;

describeAudit({ describe, it, before }, () => {
  db ??= new Database(join(dir, 'app.sqlite'));
  return {
    appUrl: origin,
    emulatorUrl: emulator.url,
    clientId: CLIENT.clientId,
    clientSecret: CLIENT.secret,
    // The app's own sign-in form on `/`; each audit user is added to its users table first.
    signIn: {
      path: '/',
      action: '/signin',
      fields: (user) => {
        db.prepare('INSERT OR IGNORE INTO users (id, phone) VALUES (?, ?)').run(user, phoneOf(user));
        return { user };
      },
      csrfFrom: '/',
    },
    actions: [
      { name: 'confirm_phone' },
      // The typed number: the audit types its own and reads back the number the app holds.
      {
        name: 'change_phone',
        requireRecentVerification: { scope: 'phone_change', maxAge: 600 },
        enteredNumber: {
          numberOf: (user) => db.prepare('SELECT phone FROM users WHERE id = ?').get(user)?.phone ?? null,
        },
      },
    ],
    probe: (sessionId) =>
      db.prepare('SELECT count(*) AS n FROM phone_confirmations WHERE session_id = ?').get(sessionId).n,
    // The audit checks that this kit calls the emulator before it starts anything.
    kit: app.locals.kit,
    sweep: { run: () => app.locals.kit.runSweep(), clock },
  };
});
