/**
 * The demo's own pieces without a browser: configuration messages, the SQLite session store's
 * expiry, the account-number rule, the outcome emails' wording, and the demo's own forms (sign-in/out
 * CSRF, 4xx writing nothing).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { normaliseAccountNumber } from '../../demo-app/actions.ts';
import { checkReturnUrlServesDemo, ConfigError, loadConfig } from '../../demo-app/config.ts';
import { openDemoDatabase } from '../../demo-app/db.ts';
import { SqliteSessionStore } from '../../demo-app/session-store.ts';
import { isKitError, type OutcomeEvent } from 'hosted-sms-verify-kit';
import {
  CHANGE_PAYOUT,
  CHANGE_PHONE,
  CHANGE_PHONE_STEP_UP,
  CONFIRM_PHONE,
  NEW_RECOVERY_CODES,
  notConfirmedDetail,
  SEE_SECURITY,
} from '../../demo-app/domain.ts';
import { emailFor } from '../../demo-app/outbox.ts';
import { endGrantsAfterPhoneChange } from '../../demo-app/after-phone-change.ts';
import { startStack, type Stack } from '../support/demo-stack.ts';

describe('demo configuration', () => {
  it('defaults match .env.example', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      verifyBaseUrl: undefined,
      clientId: 'demo-client',
      clientSecret: 'demo-secret-change-me',
      returnUrl: 'http://localhost:3000/verify/return',
      port: 3000,
      host: 'localhost',
      databasePath: './data/demo.sqlite',
      emulatorPort: 4010,
      emulatorPageHost: 'verify.localhost',
      trustProxy: false,
      sweepWorker: true,
      operators: ['usr_alice'],
    });
  });

  it('DEMO_OPERATORS names the operator page’s users (seeded ids, comma-separated); an unknown id is refused', () => {
    expect(loadConfig({ DEMO_OPERATORS: 'usr_bob, usr_chen' }).operators).toEqual(['usr_bob', 'usr_chen']);
    expect(() => loadConfig({ DEMO_OPERATORS: 'usr_bob,mallory' })).toThrow(
      'DEMO_OPERATORS must list demo user ids separated by commas (usr_alice, usr_bob, usr_chen); got "mallory".',
    );
  });

  it('SWEEP_WORKER=off runs an instance without its sweep worker; anything but on/off is refused', () => {
    expect(loadConfig({ SWEEP_WORKER: 'off' }).sweepWorker).toBe(false);
    expect(loadConfig({ SWEEP_WORKER: 'on' }).sweepWorker).toBe(true);
    expect(() => loadConfig({ SWEEP_WORKER: 'later' })).toThrow('SWEEP_WORKER must be "on" or "off"; got "later".');
  });

  it.each([
    [{ PORT: '70000' }, /PORT must be a whole number from 0 to 65535/],
    [{ VERIFY_BASE_URL: 'verify.example.com' }, /VERIFY_BASE_URL must be an absolute http\(s\) URL/],
    [{ VERIFY_BASE_URL: 'https://id:pw@verify.example.com' }, /must not carry credentials/],
    [{ VERIFY_RETURN_URL: 'http://localhost:3000/verify/return?x=1' }, /must not contain a query string/],
    [{ VERIFY_RETURN_URL: 'http://localhost:3000/' }, /needs a path of its own/],
    [{ SESSION_SECRET: 'short' }, /SESSION_SECRET must be at least 16 characters/],
    [
      { NODE_ENV: 'production', VERIFY_BASE_URL: 'https://verify.example.com' },
      /SESSION_SECRET still has the .env.example value/,
    ],
    [{ VERIFY_CLIENT_ID: 'a:b' }, /must not contain ":"/],
  ])('refuses %j with a message naming the fix', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  // A `/`, as base64 secrets have, makes the URL with the secret as userinfo unparseable.
  it.each(['super-secret-value-123', 'Zm9v/YmFyK2Jheg=='])(
    'never quotes the client secret %s in its messages',
    (secret) => {
      let refusal: unknown;
      try {
        loadConfig({ VERIFY_CLIENT_SECRET: secret, VERIFY_BASE_URL: `https://x:${secret}@verify.example.com` });
      } catch (error) {
        refusal = error;
      }
      // The refusal itself must happen: a config that loads with credentials in the URL quotes nothing.
      expect(refusal).toBeInstanceOf(ConfigError);
      expect(String(refusal)).toMatch(/must not carry credentials|must be an absolute http\(s\) URL/);
      expect(String(refusal)).not.toContain(secret);
      expect((refusal as Error).stack).not.toContain(secret);
    },
  );

  it.each([
    ['PORT', 'demo-secret-Zm9vYmFy'],
    ['SWEEP_WORKER', 'demo-secret-Zm9vYmFy'],
    ['DEMO_OPERATORS', 'usr_bob,demo-secret-Zm9vYmFy'],
    ['EMULATOR_PAGE_HOST', 'demo-secret-Zm9vYmFy/x'],
    // A secret may hold a dot, as a host name does.
    ['PORT', 'sk_live.Zm9vYmFy'],
    ['SWEEP_WORKER', 'sk_live.Zm9vYmFy'],
    ['EMULATOR_PORT', 'sk_live.Zm9vYmFy'],
    ['EMULATOR_PAGE_HOST', 'sk_live.Zm9vYmFy'],
    ['PORT', '+44 7700 900123'],
    ['SWEEP_WORKER', '07700900123'],
  ])('never repeats a secret or a phone number pasted into %s; a short mistake is still quoted', (name, value) => {
    let refusal: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(ConfigError);
    expect(String(refusal)).toContain(`${name} must`);
    expect(String(refusal)).toContain('a value not repeated here, as it may be a secret or a phone number');
    expect(String(refusal)).not.toMatch(/Zm9vYmFy|7700 ?900123/);
  });

  it('with the emulator, the return URL must reach this demo', () => {
    const config = loadConfig({ PORT: '3001', VERIFY_RETURN_URL: 'http://localhost:3000/verify/return' });
    expect(() => checkReturnUrlServesDemo(config, 3001)).toThrow(
      'VERIFY_RETURN_URL=http://localhost:3001/verify/return',
    );
    expect(() => checkReturnUrlServesDemo(loadConfig({}), 3000)).not.toThrow();
  });

  it('with the emulator and no VERIFY_RETURN_URL, the return URL follows PORT', () => {
    const config = loadConfig({ PORT: '4000' });
    expect(config.returnUrl).toBe('http://localhost:4000/verify/return');
    expect(() => checkReturnUrlServesDemo(config, 4000)).not.toThrow();
  });

  it('against a real service, an unset VERIFY_RETURN_URL keeps the documented default whatever PORT is', () => {
    const config = loadConfig({ PORT: '4000', VERIFY_BASE_URL: 'https://verify.example.com' });
    expect(config.returnUrl).toBe('http://localhost:3000/verify/return');
  });
});

describe('payout account numbers (the change_payout prepare rule)', () => {
  it('accepts 8 to 17 digits with spaces or hyphens', () => {
    expect(normaliseAccountNumber('0123 4567-89')).toBe('0123456789');
    expect(normaliseAccountNumber('12345678')).toBe('12345678');
  });
  it.each(['1234567', '123456789012345678', '12ab5678', '', ' ', 42, null, 'x'.repeat(100)])(
    'refuses %j as invalid_action_params',
    (value) => {
      try {
        normaliseAccountNumber(value);
        expect.unreachable();
      } catch (error) {
        expect(isKitError(error, 'invalid_action_params')).toBe(true);
      }
    },
  );
});

describe('SqliteSessionStore', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'demo-sessions-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('stores, expires with the cookie, touches and prunes rows', async () => {
    const db = openDemoDatabase(join(dir, 'sessions.sqlite'));
    let now = 1_000_000;
    const store = new SqliteSessionStore({ db, now: () => now, cleanupIntervalMs: 0 });
    const get = (sid: string) =>
      new Promise((resolve, reject) => store.get(sid, (err, value) => (err ? reject(err) : resolve(value))));
    const cookie = (expiresAt: number) => ({
      originalMaxAge: null,
      expires: new Date(expiresAt),
      httpOnly: true,
      path: '/',
    });
    await new Promise((r) => store.set('a', { cookie: cookie(now + 1000), userId: 'usr_alice' } as never, r));
    expect(await get('a')).toMatchObject({ userId: 'usr_alice' });

    now += 1500; // past the cookie's expiry: never returned, then pruned
    expect(await get('a')).toBeNull();
    expect(store.prune()).toBe(1);

    await new Promise((r) => store.set('b', { cookie: cookie(now + 1000) } as never, r));
    await new Promise((r) => store.touch('b', { cookie: cookie(now + 60_000) } as never, r));
    now += 5000;
    expect(await get('b')).toMatchObject({ cookie: expect.any(Object) });
    await new Promise((r) => store.destroy('b', r));
    expect(await get('b')).toBeNull();
    store.close();
    db.close();
  });
});

/**
 * A browser signed in to `app` as `userId` through the sign-in form, and a way to read the home
 * page's sign-out token when it is needed (after what the test does while signed in).
 */
async function signedInAs(app: Parameters<typeof request.agent>[0], userId: string) {
  const agent = request.agent(app);
  const token = /name="_csrf" value="([^"]+)"/.exec((await agent.get('/signin')).text)![1]!;
  expect((await agent.post('/signin').type('form').send({ _csrf: token, userId })).status).toBe(303);
  const signOutToken = async () =>
    /action="\/signout"><input type="hidden" name="_csrf" value="([^"]+)"/.exec((await agent.get('/')).text)![1]!;
  return { agent, signOutToken };
}

/** A step-up grant of Chen's in the shared demo stack, as a verification would have written it. */
async function grantChen(stack: Stack, sessionId: string): Promise<void> {
  const startedAt = stack.clock.now();
  await stack.demo.kit.store.stepUp!.insertGrant({
    sessionId,
    userRef: 'usr_chen',
    scope: 'security',
    resourceKey: '',
    browserSession: 'a-browser-session',
    startedAt,
    grantedAt: startedAt,
  });
}

describe("the demo's own forms and API", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => stack?.close());

  const sessionRows = () => (stack.demo.db.prepare('SELECT COUNT(*) AS n FROM demo_sessions').get() as { n: number }).n;

  it('sign-in needs the form token: a forged post is refused and creates no session', async () => {
    const rows = sessionRows();
    const forged = await request(stack.demo.app).post('/signin').type('form').send({ userId: 'usr_alice' });
    expect(forged.status).toBe(403);
    expect(forged.headers['set-cookie']).toBeUndefined();
    expect(sessionRows()).toBe(rows);
  });

  it('signs in with the token (new session id, demo.sid cookie flags) and refuses unknown users', async () => {
    const agent = request.agent(stack.demo.app);
    const page = await agent.get('/signin');
    const anonymousCookie = String(page.headers['set-cookie']);
    expect(anonymousCookie).toMatch(/^demo\.sid=.*; HttpOnly; SameSite=Lax/);
    expect(anonymousCookie).not.toMatch(/Secure/); // plain http on loopback
    const token = /name="_csrf" value="([^"]+)"/.exec(page.text)![1]!;

    const unknown = await agent.post('/signin').type('form').send({ _csrf: token, userId: 'usr_mallory' });
    expect(unknown.status).toBe(400);
    expect(unknown.text).toContain('Pick one of the demo users.');

    const ok = await agent.post('/signin').type('form').send({ _csrf: token, userId: 'usr_bob' });
    expect(ok.status).toBe(303);
    expect(ok.headers.location).toBe('/');
    expect(String(ok.headers['set-cookie'])).not.toBe(anonymousCookie); // regenerated
    const me = await agent.get('/api/me');
    expect(me.status).toBe(200);
    expect(me.body.user).toMatchObject({ id: 'usr_bob', phone: '••\u00a002' });
    expect(me.headers['cache-control']).toBe('no-store');
    // The cookie the browser had before signing in (one an attacker could have planted) is not signed in.
    const planted = anonymousCookie.split(';')[0]!;
    expect((await request(stack.demo.app).get('/api/me').set('Cookie', planted)).status).toBe(401);

    // Sign-out is a POST with the token; afterwards /api/me is 401 JSON.
    const home = await agent.get('/');
    // A full number appears only where it is typed: the sign-in chooser, the home page and the API mask it.
    for (const shown of [page.text, home.text, JSON.stringify(me.body)]) expect(shown).not.toContain('5550100002');
    expect(home.text).toContain('••\u00a002');
    const signoutToken = /action="\/signout"><input type="hidden" name="_csrf" value="([^"]+)"/.exec(home.text)![1]!;
    expect((await agent.post('/signout').type('form').send({})).status).toBe(403);
    expect((await agent.post('/signout').type('form').send({ _csrf: signoutToken })).status).toBe(303);
    const after = await agent.get('/api/me');
    expect(after.status).toBe(401);
    expect(after.body).toEqual({ error: 'not_signed_in', message: expect.any(String) });
  });

  it('sign-out ends the user’s step-up grants with the session', async () => {
    const { agent, signOutToken } = await signedInAs(stack.demo.app, 'usr_chen');
    await grantChen(stack, 'grant-before-sign-out');
    expect(await stack.demo.kit.grants.list({ userRef: 'usr_chen' })).toHaveLength(1);
    const signoutToken = await signOutToken();
    expect((await agent.post('/signout').type('form').send({ _csrf: signoutToken })).status).toBe(303);
    expect(await stack.demo.kit.grants.list({ userRef: 'usr_chen' })).toEqual([]);
  });

  it("sign-out whose session store fails to end the session still ends the user's step-up grants", async () => {
    const { agent, signOutToken } = await signedInAs(stack.demo.app, 'usr_chen');
    await grantChen(stack, 'grant-before-failed-sign-out');
    const signoutToken = await signOutToken();
    // The session store cannot delete the session (its database is locked): the browser stays signed in.
    const destroy = vi
      .spyOn(SqliteSessionStore.prototype, 'destroy')
      .mockImplementation((_sid, callback) => callback?.(new Error('database is locked')));
    try {
      expect((await agent.post('/signout').type('form').send({ _csrf: signoutToken })).status).toBe(500);
    } finally {
      destroy.mockRestore();
    }
    // A grant must not outlive a sign-out the user asked for, even one that failed.
    expect(await stack.demo.kit.grants.list({ userRef: 'usr_chen' })).toEqual([]);
  });

  it('sign-out signs out even when revoking the step-up grants fails (the database is down): 303, the session gone', async () => {
    const { agent, signOutToken } = await signedInAs(stack.demo.app, 'usr_chen');
    const signoutToken = await signOutToken();
    const revoke = vi.spyOn(stack.demo.kit.grants, 'revoke').mockRejectedValue(new Error('database is down'));
    try {
      const signedOut = await agent.post('/signout').type('form').send({ _csrf: signoutToken });
      expect(signedOut.status).toBe(303);
      expect(signedOut.headers.location).toBe('/signin');
      expect(revoke).toHaveBeenCalledWith({ userRef: 'usr_chen' });
    } finally {
      revoke.mockRestore();
    }
    expect((await agent.get('/api/me')).status).toBe(401);
  });

  it("sign-out with a logger that throws: the revocation's failure loses its line, never the sign-out", async () => {
    const { createDemoApp } = await import('../../demo-app/app.ts');
    const dir = mkdtempSync(join(tmpdir(), 'demo-logger-'));
    const logged: string[] = [];
    const throwing = () => {
      throw new Error('logger down');
    };
    const demo = createDemoApp({
      verifyBaseUrl: stack.emulatorUrl,
      clientId: 'demo-client',
      clientSecret: 'irrelevant-here',
      returnUrl: 'http://localhost:3000/verify/return',
      databasePath: join(dir, 'demo.sqlite'),
      sessionSecret: 'another-long-session-secret-value',
      trustProxy: false,
      logger: {
        info: throwing,
        warn: throwing,
        error: (_obj: unknown, msg?: string) => {
          logged.push(String(msg));
          throw new Error('logger down');
        },
      },
    });
    try {
      const { agent, signOutToken } = await signedInAs(demo.app, 'usr_chen');
      const signoutToken = await signOutToken();
      vi.spyOn(demo.kit.grants, 'revoke').mockRejectedValue(new Error('database is down'));
      expect((await agent.post('/signout').type('form').send({ _csrf: signoutToken })).status).toBe(303);
      expect(logged).toContain('demo: sign-out could not revoke step-up grants');
      expect((await agent.get('/api/me')).status).toBe(401);
    } finally {
      vi.restoreAllMocks();
      await demo.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('sets Secure on the cookie when served over https behind a trusted proxy', async () => {
    const { createDemoApp } = await import('../../demo-app/app.ts');
    const dir = mkdtempSync(join(tmpdir(), 'demo-https-'));
    const demo = createDemoApp({
      verifyBaseUrl: stack.emulatorUrl,
      clientId: 'demo-client',
      clientSecret: 'irrelevant-here',
      returnUrl: 'https://demo.example.com/verify/return',
      databasePath: join(dir, 'demo.sqlite'),
      sessionSecret: 'another-long-session-secret-value',
      trustProxy: 'loopback',
    });
    try {
      const res = await request(demo.app).get('/signin').set('X-Forwarded-Proto', 'https');
      expect(String(res.headers['set-cookie'])).toMatch(/; Secure; SameSite=Lax/);
      expect(res.headers['strict-transport-security']).toBeDefined();
    } finally {
      await demo.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('every page carries helmet headers and never the client secret', async () => {
    for (const path of ['/signin', '/api/me', '/nope', '/verify/start-again?action=confirm_phone']) {
      const res = await request(stack.demo.app).get(path);
      expect(res.headers['content-security-policy'], path).toBeDefined();
      expect(res.headers['x-content-type-options'], path).toBe('nosniff');
      expect(res.text, path).not.toContain(stack.clientSecret);
    }
    expect((await request(stack.demo.app).get('/nope')).status).toBe(404);
    expect((await request(stack.demo.app).get('/api/nope')).body).toEqual({
      error: 'not_found',
      message: 'No such endpoint.',
    });
  });
});

describe("the demo's outcome emails", () => {
  const event = (action: string, outcome: OutcomeEvent['outcome']): OutcomeEvent => ({
    eventId: 'e1',
    outcome,
    source: 'landing',
    sessionId: 's1',
    userRef: 'u1',
    action,
    params: {},
    destination: '••\u00a023',
    reason: null,
    supersededBy: null,
    occurredAt: 0,
    delivery: 1,
  });

  it('a changed phone number says the number was changed, not confirmed', () => {
    const email = emailFor(event(CHANGE_PHONE, 'fulfilled'));
    expect(email.subject).toBe('Your phone number was changed');
    expect(email.body).toContain('••\u00a023');
    expect(emailFor(event(CHANGE_PHONE, 'failed')).body).toContain('changing your phone number');
  });

  it("a step-up (confirm it's you) says so, not that a phone number was confirmed", () => {
    for (const scope of [CHANGE_PHONE_STEP_UP, SEE_SECURITY, NEW_RECOVERY_CODES]) {
      const fulfilled = emailFor(event(scope, 'fulfilled'));
      expect(fulfilled.subject).toBe('You confirmed it’s you');
      expect(`${fulfilled.subject} ${fulfilled.body}`).not.toMatch(/phone number confirmed/i);
      expect(emailFor(event(scope, 'expired')).body).toContain('confirming it’s you');
    }
  });

  it("ends the user's step-up grants once a phone change is fulfilled, after its email, and only then", async () => {
    const calls: string[] = [];
    const kit = {
      grants: {
        list: async () => [],
        revoke: async (q: { userRef: string }) => (calls.push(`revoke ${q.userRef}`), 1),
      },
    };
    const hook = endGrantsAfterPhoneChange(
      (e) => void calls.push(`email ${e.action} ${e.outcome}`),
      () => kit,
    );
    await hook(event(CHANGE_PHONE, 'fulfilled'));
    for (const other of [
      event(CHANGE_PHONE, 'failed'),
      event(CONFIRM_PHONE, 'fulfilled'),
      event(CHANGE_PHONE_STEP_UP, 'fulfilled'),
    ])
      await hook(other);
    expect(calls).toEqual([
      `email ${CHANGE_PHONE} fulfilled`,
      'revoke u1',
      `email ${CHANGE_PHONE} failed`,
      `email ${CONFIRM_PHONE} fulfilled`,
      `email ${CHANGE_PHONE_STEP_UP} fulfilled`,
    ]);
    // A revocation that fails fails the delivery, so the kit delivers the event again.
    kit.grants.revoke = () => Promise.reject(new Error('store down'));
    await expect(hook(event(CHANGE_PHONE, 'fulfilled'))).rejects.toThrow('store down');
  });

  it('a confirmation that confirmed nothing (the number was no longer the user’s) says so, not "confirmed"', () => {
    const email = emailFor(event(CONFIRM_PHONE, 'fulfilled'), notConfirmedDetail('••\u00a023'));
    expect(email.subject).toBe('Your phone number was not confirmed');
    expect(email.body).toBe('••\u00a023 is no longer your number, so nothing was changed.');
    expect(emailFor(event(CONFIRM_PHONE, 'fulfilled'), 'Confirmed ••\u00a023').subject).toBe('Phone number confirmed');
  });

  it('no email says a code answered: the hosted page may have taken a passkey instead', () => {
    for (const action of [CONFIRM_PHONE, CHANGE_PHONE_STEP_UP, SEE_SECURITY, NEW_RECOVERY_CODES]) {
      expect(emailFor(event(action, 'fulfilled')).body).not.toMatch(/with a code/);
    }
  });

  it('a confirmed phone number and a payout change read as before', () => {
    expect(emailFor(event(CONFIRM_PHONE, 'fulfilled')).subject).toBe('Phone number confirmed');
    expect(emailFor(event(CHANGE_PAYOUT, 'failed')).body).toContain('changing your payout account');
  });
});
