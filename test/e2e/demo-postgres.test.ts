/**
 * The demo on PostgreSQL (DATABASE_URL), as two instances on one database: a user signed in on
 * one instance is signed in on the other (shared sessions, in connect-pg-simple's store), a
 * verification started on one and landed on the other is fulfilled once (a phone change's step-up
 * too, its confirmation posted to the other), and the copyable sweep job, built from the same
 * environment, fulfils a verification whose tab was closed. A database holding sessions in the
 * demo's earlier columns keeps them. Over HTTP, without a browser (the browser suites cover the
 * pages themselves on SQLite).
 */
import { createHmac, randomBytes } from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDemoApp, SESSION_COOKIE, type DemoApp } from '../../demo-app/app.ts';
import { CHANGE_PHONE_STEP_UP } from '../../demo-app/domain.ts';
import { demoSweepKit } from '../../demo-app/kit-deps.ts';
import { runSweepJob } from '../../middleware/sweep/sweep-job.ts';
import { formsIn } from '../../testing/html-forms.ts';
import { createTestClock } from '../support/clock.ts';
import { useTestEmulator } from '../support/emulator.ts';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../support/postgres.ts';
import { DEMO_USERS } from '../support/users.ts';
import { waitFor } from '../support/wait-for.ts';

const PUBLIC = 'http://localhost:3902';
const RETURN_URL = `${PUBLIC}/verify/return`;
const CLIENT_ID = 'demo-client';
const CLIENT_SECRET = `pg-demo-${randomBytes(12).toString('hex')}`;
const SESSION_SECRET = 'postgres-demo-session-secret-0123456789';

let database: TestDatabase;
let instances: DemoApp[];
const emulator = useTestEmulator({
  clients: [{ clientId: CLIENT_ID, secret: CLIENT_SECRET, returnUrl: RETURN_URL, platform: 'web' }],
});
/** Both instances' clock: a test starts an attempt in the past instead of backdating it with SQL. */
const clock = createTestClock();

function instance(databaseUrl = database.url): DemoApp {
  return createDemoApp({
    now: clock.now,
    verifyBaseUrl: emulator.url,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    returnUrl: RETURN_URL,
    databasePath: '/nonexistent/unused.sqlite',
    databaseUrl,
    sessionSecret: SESSION_SECRET,
    trustProxy: false,
  });
}

/** A browser's cookie jar, shared by requests to either instance (they sit behind one address). */
class Browser {
  cookie = '';
  async send(test: request.Test): Promise<request.Response> {
    const response = await (this.cookie === '' ? test : test.set('Cookie', this.cookie));
    const set = response.headers['set-cookie'] as unknown as string[] | undefined;
    const sid = set?.find((c) => c.startsWith('demo.sid='));
    if (sid !== undefined) this.cookie = sid.split(';')[0]!;
    return response;
  }
}

const formToken = (html: string, action: string) =>
  new RegExp(`name="_csrf" value="([^"]+)">\\s*<input type="hidden" name="action" value="${action}"`).exec(html)?.[1];

async function signIn(browser: Browser, app: DemoApp, userId: string): Promise<void> {
  const page = await browser.send(request(app.app).get('/signin'));
  const token = /name="_csrf" value="([^"]+)"/.exec(page.text)![1]!;
  const done = await browser.send(request(app.app).post('/signin').type('form').send({ _csrf: token, userId }));
  expect(done.status).toBe(303);
}

async function start(browser: Browser, app: DemoApp, action: string, extra: Record<string, string> = {}) {
  const home = await browser.send(request(app.app).get('/'));
  expect(home.status).toBe(200);
  const token = formToken(home.text, action);
  expect(token).toBeDefined();
  const started = await browser.send(
    request(app.app)
      .post('/verify/start')
      .type('form')
      .set('Origin', PUBLIC)
      .set('Sec-Fetch-Site', 'same-origin')
      .send({ _csrf: token!, action, ...extra }),
  );
  expect(started.status, started.text.slice(0, 200)).toBe(200);
  return newestAttempt(app, action);
}

/** The newest started attempt of `action`, read through the kit's store. */
async function newestAttempt(app: DemoApp, action: string): Promise<{ session_id: string; state: string }> {
  const attempts = await app.store.listAttempts({ limit: Number.MAX_SAFE_INTEGER });
  const newest = attempts.filter((a) => a.action === action).reduce((a, b) => (b.startSeq > a.startSeq ? b : a));
  return { session_id: newest.sessionId, state: newest.state };
}

/**
 * The phone change as its user goes through it, across the instances: the start (on the second)
 * asks to confirm it's them and texts nothing; the step-up's verification lands on the first and
 * its confirmation, posted to the second, runs the kept start. Returns the change's attempt.
 */
async function changePhoneAfterStepUp(browser: Browser, [a, b]: [DemoApp, DemoApp], phone: string) {
  const home = await browser.send(request(b.app).get('/'));
  const sent = (await emulator.control.outbox()).length;
  const post = (app: DemoApp, fields: Record<string, string>) =>
    browser.send(
      request(app.app)
        .post('/verify/start')
        .type('form')
        .set('Origin', PUBLIC)
        .set('Sec-Fetch-Site', 'same-origin')
        .send(fields),
    );
  const asked = await post(b, { _csrf: formToken(home.text, 'change_phone')!, action: 'change_phone', phone });
  expect(asked.text).toContain('Confirm it’s you');
  expect((await emulator.control.outbox()).length).toBe(sent);
  const confirm = formsIn(asked.text).find((form) => form.fields.intent !== undefined)!;
  expect(confirm.fields.action).toBe(CHANGE_PHONE_STEP_UP);
  expect((await post(b, confirm.fields)).status).toBe(200);
  const stepUp = await newestAttempt(b, CHANGE_PHONE_STEP_UP);
  expect((await emulator.control.outbox()).slice(sent).map((m) => m.to)).toEqual([DEMO_USERS.alice.phone]);
  expect((await emulator.control.complete(stepUp.session_id, { outcome: 'verified' })).status).toBe(200);
  const landing = await browser.send(request(a.app).get(`/verify/return?${new URLSearchParams(stepUp).toString()}`));
  expect(landing.status).toBe(303);
  const confirmation = await browser.send(request(b.app).get(landing.headers.location!));
  const kept = formsIn(confirmation.text).find((form) => form.fields._verify_kit_intent !== undefined)!;
  const ran = await post(a, kept.fields);
  expect(ran.status, ran.text.slice(0, 200)).toBe(200);
  return newestAttempt(a, 'change_phone');
}

describe.skipIf(postgresUnavailable !== undefined)('the demo on PostgreSQL, two instances', () => {
  beforeAll(async () => {
    database = await createTestDatabase({ max: 2 });
    instances = [instance(), instance()];
  });
  afterAll(async () => {
    for (const demo of instances ?? []) await demo.close();
    await database?.drop();
  });

  it('signs in on one instance, starts on the other, lands on the first: fulfilled once, seen by both', async () => {
    const [a, b] = instances as [DemoApp, DemoApp];
    expect(a.storeKind).toBe('postgres');
    const browser = new Browser();
    await signIn(browser, a, 'usr_alice');
    // Shared sessions: the other instance knows the user.
    expect((await browser.send(request(b.app).get('/api/me'))).body.user).toMatchObject({ id: 'usr_alice' });

    const attempt = await start(browser, b, 'confirm_phone');
    expect((await emulator.control.complete(attempt.session_id, { outcome: 'verified' })).status).toBe(200);
    const query = new URLSearchParams({ session_id: attempt.session_id, state: attempt.state });
    const path = `/verify/return?${query.toString()}`;
    const landings = await Promise.all([a, b, a, b].map((app) => browser.send(request(app.app).get(path))));
    expect(landings.map((l) => l.status)).toEqual([303, 303, 303, 303]);
    expect(landings[0]!.headers.location).toBe('/verified/phone');
    // The success page shows the outcome from the kit's one-time flash, on either instance, once.
    const confirmed = await browser.send(request(b.app).get('/verified/phone'));
    expect(confirmed.text).toMatch(/<p id="landed" role="status"><strong>Phone confirmed: this verification/);
    expect((await browser.send(request(a.app).get('/verified/phone'))).text).not.toContain('id="landed"');

    const me = (await browser.send(request(a.app).get('/api/me'))).body;
    expect(me.user).toMatchObject({ phoneVerified: true });
    expect(me.actions).toEqual([expect.objectContaining({ sessionId: attempt.session_id, action: 'confirm_phone' })]);
    const activity = 'SELECT count(*)::int AS n FROM demo_activity WHERE session_id = $1';
    const { rows } = await database.pool.query(activity, [attempt.session_id]);
    expect(rows[0]).toEqual({ n: 1 });
  });

  it('a typed number becomes the user’s number once, started on one instance after a step-up on both, and landed on both', async () => {
    const [a, b] = instances as [DemoApp, DemoApp];
    const browser = new Browser();
    await signIn(browser, a, 'usr_alice');
    const attempt = await changePhoneAfterStepUp(browser, [a, b], '+33 6 12 34 56 78');
    const texted = (await emulator.control.outbox()).filter((m) => m.sessionId === attempt.session_id);
    expect(texted.map((m) => m.to)).toEqual(['+33612345678']);
    expect((await emulator.control.complete(attempt.session_id, { outcome: 'verified' })).status).toBe(200);
    const path = `/verify/return?${new URLSearchParams(attempt).toString()}`;
    const landings = await Promise.all([a, b].map((app) => browser.send(request(app.app).get(path))));
    expect(landings.map((l) => l.status)).toEqual([303, 303]);
    const user = 'SELECT phone, verified_phone FROM demo_users WHERE id = $1';
    expect((await database.pool.query(user, ['usr_alice'])).rows).toEqual([
      { phone: '+33612345678', verified_phone: '+33612345678' },
    ]);
    const activity = 'SELECT count(*)::int AS n FROM demo_activity WHERE session_id = $1';
    expect((await database.pool.query(activity, [attempt.session_id])).rows[0]).toEqual({ n: 1 });
  });

  it('the copyable sweep job, on the same DATABASE_URL, fulfils a verification whose tab was closed', async () => {
    const [a] = instances as [DemoApp, DemoApp];
    const browser = new Browser();
    await signIn(browser, a, 'usr_bob');
    // Started four minutes ago by the instances' clock: the sweep's first read (after 3 min) is due.
    const attempt = await clock.shifted(-4 * 60_000, () =>
      start(browser, a, 'change_payout', { accountNumber: '1234 5678 9012' }),
    );
    expect((await emulator.control.complete(attempt.session_id, { outcome: 'verified' })).status).toBe(200);
    // Nobody lands.

    const lines: string[] = [];
    const env = {
      DATABASE_URL: database.url,
      VERIFY_BASE_URL: emulator.url,
      VERIFY_CLIENT_ID: CLIENT_ID,
      VERIFY_CLIENT_SECRET: CLIENT_SECRET,
      VERIFY_RETURN_URL: RETURN_URL,
      SESSION_SECRET,
    };
    const code = await runSweepJob({
      kit: (e, job) => demoSweepKit(e as NodeJS.ProcessEnv, job),
      argv: ['--once'],
      env,
      print: (l) => lines.push(l),
      handleSignals: false,
    });
    expect(code, lines.join('\n')).toBe(0);
    expect(JSON.parse(lines[0]!)).toMatchObject({ event: 'sweep', fulfilled: 1, errors: 0 });
    expect(lines.join('\n')).not.toContain(CLIENT_SECRET);

    const me = (await browser.send(request(a.app).get('/api/me'))).body;
    expect(me.user.payoutAccount).toMatchObject({ masked: '••••9012' });
    expect(me.actions[0]).toMatchObject({ sessionId: attempt.session_id, action: 'change_payout' });
  });

  it('a landing still reading the service when its user signs out (on the other instance) never brings the session back', async () => {
    const [a, b] = instances as [DemoApp, DemoApp];
    const browser = new Browser();
    await signIn(browser, a, 'usr_chen');
    const attempt = await start(browser, a, 'confirm_phone');
    expect((await emulator.control.complete(attempt.session_id, { outcome: 'verified' })).status).toBe(200);
    const signedIn = browser.cookie;
    const home = await browser.send(request(b.app).get('/'));
    const signOutToken = /action="\/signout"><input type="hidden" name="_csrf" value="([^"]+)"/.exec(home.text)![1]!;
    const readsBefore = (await emulator.control.stats()).statusReads;
    await emulator.control.injectFaults({ statusDelayMs: 800 });
    let landed: request.Response;
    try {
      const query = new URLSearchParams(attempt);
      const landing = request(a.app).get(`/verify/return?${query.toString()}`).set('Cookie', signedIn).then();
      // The landing has loaded the session and waits for the service's answer: sign out now.
      await waitFor(
        async () => (await emulator.control.stats()).statusReads > readsBefore,
        5_000,
        'the landing’s read',
      );
      const signedOut = await browser.send(request(b.app).post('/signout').type('form').send({ _csrf: signOutToken }));
      expect(signedOut.status).toBe(303);
      landed = await landing;
    } finally {
      await emulator.control.injectFaults({ statusDelayMs: 0 });
    }
    // The cookie from before the sign-out opens nothing.
    expect((await request(a.app).get('/api/me').set('Cookie', signedIn)).status).toBe(401);
    const { rows } = await database.pool.query(
      `SELECT count(*)::int AS n FROM demo_sessions WHERE sess->>'userId' = 'usr_chen'`,
    );
    expect(rows[0]).toEqual({ n: 0 });
    // The landing fulfilled the verification, and answered as to a signed-out browser.
    expect(landed.status).toBe(200);
  });

  it('keeps the sessions a database holds in the earlier columns (text, expires in ms): signed in before, signed in after', async () => {
    const earlier = await createTestDatabase({ max: 1 });
    let demo: DemoApp | undefined;
    try {
      await earlier.pool
        .query(`CREATE TABLE demo_sessions (sid TEXT PRIMARY KEY, sess TEXT NOT NULL, expires BIGINT NOT NULL);
        CREATE INDEX demo_sessions_expires ON demo_sessions (expires)`);
      const stored = (sid: string, userId: string, expires: number) => {
        const cookie = {
          originalMaxAge: 3_600_000,
          expires: new Date(expires).toISOString(),
          httpOnly: true,
          path: '/',
        };
        const values = [sid, JSON.stringify({ cookie, userId }), expires];
        return earlier.pool.query('INSERT INTO demo_sessions (sid, sess, expires) VALUES ($1, $2, $3)', values);
      };
      await stored('kept-session', 'usr_alice', Date.now() + 3_600_000);
      await stored('lapsed-session', 'usr_bob', Date.now() - 60_000);

      demo = instance(earlier.url);
      // express-session's cookie: the id, signed with the session secret (cookie-signature's HMAC).
      const cookieFor = (sid: string) => {
        const signature = createHmac('sha256', SESSION_SECRET).update(sid).digest('base64').replace(/=+$/, '');
        return `${SESSION_COOKIE}=${encodeURIComponent(`s:${sid}.${signature}`)}`;
      };
      const me = (sid: string) => request(demo!.app).get('/api/me').set('Cookie', cookieFor(sid));
      const kept = await me('kept-session');
      expect(kept.status).toBe(200);
      expect(kept.body.user).toMatchObject({ id: 'usr_alice' });
      expect((await me('lapsed-session')).status).toBe(401); // expired before: still expired
      const { rows } = await earlier.pool.query(
        `SELECT sid, sess->>'userId' AS "userId", expire > now()::timestamp AS live FROM demo_sessions ORDER BY sid`,
      );
      expect(rows).toEqual([
        { sid: 'kept-session', userId: 'usr_alice', live: true },
        { sid: 'lapsed-session', userId: 'usr_bob', live: false },
      ]);
    } finally {
      await demo?.close();
      await earlier.drop();
    }
  });
});
