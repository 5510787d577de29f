// The app's verification on PostgreSQL, end to end over HTTP, with only the kit's public `testing`
// entry. DATABASE_URL names a scratch database the test may write to.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it, test } from 'node:test';
import pg from 'pg';
import {
  createTestBrowser,
  createTestClock,
  describeAudit,
  startEmulator,
  walkHostedPage,
  type RunningEmulator,
  type TestBrowser,
} from 'hosted-sms-verify-kit/testing';
import { createApp, type App } from '../src/app.js';

const CLIENT = { clientId: 'example-ts', secret: 'example-ts-secret-0123456789' };
const databaseUrl = process.env.DATABASE_URL;
if (databaseUrl === undefined) throw new Error('Set DATABASE_URL to a scratch PostgreSQL database for these tests.');
const pool = new pg.Pool({ connectionString: databaseUrl });
const server = createServer();
const clock = createTestClock();
let origin: string;
let emulator: RunningEmulator;
let app: App;
let env: NodeJS.ProcessEnv;

before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://localhost:${(server.address() as AddressInfo).port}`;
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
    SESSION_SECRET: 'a-test-session-secret',
  };
  app = await createApp({ pool, env, now: clock.now });
  server.on('request', app.app);
});
after(async () => {
  await app.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await emulator.close();
  await pool.end();
});

test('refuses to start without a SESSION_SECRET of its own: a cookie key written in the code would sign forged cookies', async () => {
  const { SESSION_SECRET: _, ...withoutSecret } = env;
  for (const given of [{}, { SESSION_SECRET: 'short' }]) {
    await assert.rejects(createApp({ pool, env: { ...withoutSecret, ...given }, now: clock.now }), /SESSION_SECRET/);
  }
});

/** The session cookie (`app.sid=...`) an answer sets, if any. */
const sessionCookieOf = (answer: Response) =>
  answer.headers
    .getSetCookie()
    .map((line) => line.split(';')[0] ?? '')
    .find((pair) => pair.startsWith('app.sid='));
const signInWith = (user: string, cookie?: string) =>
  fetch(`${origin}/signin`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie === undefined ? {} : { cookie }) },
    body: new URLSearchParams({ user }),
  });
const signedInUserOf = async (cookie: string) =>
  ((await (await fetch(`${origin}/me`, { headers: { cookie } })).json()) as { user: string | null }).user;

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
  const signInAsMallory = (headers: Record<string, string>) =>
    fetch(`${origin}/signin`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams({ user: 'mallory' }),
    });
  const fromElsewhere: Record<string, string>[] = [
    { origin: 'https://attacker.example' },
    { origin: 'null' },
    { 'sec-fetch-site': 'cross-site', origin: 'https://attacker.example' },
    { 'sec-fetch-site': 'same-site', origin: 'http://other.localhost' },
  ];
  for (const headers of fromElsewhere) {
    const answer = await signInAsMallory(headers);
    assert.equal(answer.status, 403, JSON.stringify(headers));
    assert.equal(sessionCookieOf(answer), undefined, JSON.stringify(headers));
  }
  const fromItsOwnPage: Record<string, string>[] = [{ origin }, { 'sec-fetch-site': 'same-origin', origin }];
  for (const headers of fromItsOwnPage) {
    const answer = await signInAsMallory(headers);
    assert.equal(answer.status, 303, JSON.stringify(headers));
    const cookie = sessionCookieOf(answer);
    assert.ok(cookie);
    assert.equal(await signedInUserOf(cookie), 'mallory');
  }
});

test("behind a TLS proxy the app trusts (TRUST_PROXY), the session cookie is Secure; a client's own X-Forwarded-Proto changes nothing", async () => {
  const signInVia = async (appEnv: NodeJS.ProcessEnv) => {
    const proxied = await createApp({ pool, env: appEnv, now: clock.now });
    const front = createServer(proxied.app);
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    try {
      const answer = await fetch(`http://127.0.0.1:${(front.address() as AddressInfo).port}/signin`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-proto': 'https' },
        body: new URLSearchParams({ user: 'alice' }),
      });
      return answer.headers.getSetCookie().find((line) => line.startsWith('app.sid=')) ?? '';
    } finally {
      await proxied.close();
      front.closeAllConnections();
      await new Promise((resolve) => front.close(resolve));
    }
  };
  assert.match(await signInVia({ ...env, TRUST_PROXY: 'loopback' }), /;\s*Secure/i);
  assert.doesNotMatch(await signInVia(env), /;\s*Secure/i);
});

test('a sign-in without a user name gets a 400 that says so, and no session', async () => {
  const posts: RequestInit[] = [
    {}, // no form at all: Express 5 leaves req.body undefined
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

test('a change of number asks the user to confirm it is them first: a start alone texts the new number nothing', async () => {
  const browser = createTestBrowser();
  const signedIn = await browser.submitForm(await browser.get(`${origin}/`), { user: 'bob' });
  const home = await browser.get(signedIn.location ?? '');
  const sent = (await emulator.control.stats()).smsSent;
  const answer = await browser.submitForm(
    home,
    { action: 'change_phone', phone: '07400 654321' },
    { action: '/verify/start' },
  );
  assert.match(answer.html, /Confirm it/);
  assert.equal((await emulator.control.stats()).smsSent, sent);
});

async function startConfirming(browser: TestBrowser, user: string) {
  const signedIn = await browser.submitForm(await browser.get(`${origin}/`), { user });
  return browser.submitForm(await browser.get(signedIn.location ?? ''), {}, { action: '/verify/start' });
}
async function confirmations(browser: TestBrowser): Promise<{ sessionId: string; phone: string }[]> {
  return (JSON.parse((await browser.get(`${origin}/me`)).html) as { confirmations: [] }).confirmations;
}

test('a landing fulfils once, and a reload of it fulfils nothing more', async () => {
  const browser = createTestBrowser();
  const walked = await walkHostedPage(await startConfirming(browser, 'alice'), { emulator, browser });
  const landing = await browser.get(walked.landingUrl);
  assert.equal(landing.status, 303);
  assert.equal(landing.location, `${origin}/done`);
  assert.deepEqual(await confirmations(browser), [{ sessionId: walked.sessionId, phone: '••\u00a001' }]);
  assert.equal((await browser.get(walked.landingUrl)).location, `${origin}/done`);
  assert.equal((await confirmations(browser)).length, 1);
});

test('a closed tab is fulfilled by the sweep once the shared clock passes its first check', async () => {
  const browser = createTestBrowser();
  const started = await startConfirming(browser, 'bob');
  const walked = await walkHostedPage(started, { emulator, browser });
  // The user closes the tab: nobody opens walked.landingUrl.
  assert.equal((await app.kit.runSweep()).fulfilled, 0); // not due yet
  clock.advance({ seconds: 181 });
  assert.equal((await app.kit.runSweep()).fulfilled, 1);
  assert.deepEqual(await confirmations(browser), [{ sessionId: walked.sessionId, phone: '••\u00a002' }]);
  assert.equal((await browser.get(walked.landingUrl)).location, `${origin}/done`);
  assert.equal((await confirmations(browser)).length, 1);
});

const verifiedAtOf = async (user: string) =>
  (await pool.query<{ at: Date | null }>('SELECT phone_verified_at AS at FROM users WHERE id = $1', [user])).rows[0]
    ?.at;

test('confirming a number proves that number: a passkey saved while confirming the old one does not confirm a new one', async () => {
  await pool.query("INSERT INTO users (id, phone) VALUES ('carol', '+15550100003') ON CONFLICT DO NOTHING");
  const browser = createTestBrowser();
  const first = await walkHostedPage(await startConfirming(browser, 'carol'), {
    emulator,
    browser,
    passkeyOffer: 'save',
  });
  assert.equal((await browser.get(first.landingUrl)).location, `${origin}/done`);
  // Carol's number is changed outside this app's change_phone (by support, an import).
  await pool.query("UPDATE users SET phone = '+15550100033', phone_verified_at = NULL WHERE id = 'carol'");
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
  assert.notEqual(await verifiedAtOf('carol'), null);
});

test('a confirmation that lands after the number changed confirms nothing: the new number stays unconfirmed', async () => {
  await pool.query("INSERT INTO users (id, phone) VALUES ('dan', '+15550100004') ON CONFLICT DO NOTHING");
  const browser = createTestBrowser();
  const walked = await walkHostedPage(await startConfirming(browser, 'dan'), { emulator, browser });
  await pool.query("UPDATE users SET phone = '+15550100044' WHERE id = 'dan'");
  assert.equal((await browser.get(walked.landingUrl)).location, `${origin}/done`);
  // The page it lands on reads the number back, and does not say it was confirmed.
  assert.equal((await browser.get(`${origin}/done`)).html, '<p>Not confirmed: your number ••\u00a044.</p>');
  assert.equal(await verifiedAtOf('dan'), null);
  assert.deepEqual(await confirmations(browser), []);
});

/** A phone number of the audit's own for each user it signs in. */
const phoneOf = (name: string) =>
  `+1555${String(parseInt(name.replace(/\D/g, '').slice(-7) || '0', 10)).padStart(7, '0')}`;

// The kit's integration audit attacks the running app, each check a test case.
describeAudit({ describe, it, before }, () => ({
  appUrl: origin,
  emulatorUrl: emulator.url,
  clientId: CLIENT.clientId,
  clientSecret: CLIENT.secret,
  // The app's own sign-in form on `/`; each audit user is added to its users table first.
  signIn: async (agent, user) => {
    await pool.query('INSERT INTO users (id, phone) VALUES ($1, $2) ON CONFLICT DO NOTHING', [user, phoneOf(user)]);
    await agent.postForm('/signin', { user }, { origin, 'sec-fetch-site': 'same-origin' });
    const home = await agent.request('/');
    const csrf = /name="_csrf" value="([^"]*)"/.exec(home.body)?.[1];
    if (csrf === undefined) throw new Error(`no start form for ${user}`);
    return { csrf };
  },
  actions: [
    { name: 'confirm_phone' },
    // The typed number: the audit types its own and reads back the number the app holds.
    {
      name: 'change_phone',
      requireRecentVerification: { scope: 'phone_change', maxAge: 600 },
      enteredNumber: {
        numberOf: async (user) => {
          const { rows } = await pool.query<{ phone: string }>('SELECT phone FROM users WHERE id = $1', [user]);
          return rows[0]?.phone ?? null;
        },
      },
    },
  ],
  probe: async (sessionId) => {
    const { rows } = await pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM phone_confirmations WHERE session_id = $1',
      [sessionId],
    );
    return rows[0]?.n ?? 0;
  },
  // The audit checks that this kit calls the emulator before it starts anything.
  kit: app.kit,
  sweep: { run: () => app.kit.runSweep(), clock },
}));
