/**
 * Step-up on two instances of one app behind one address, on one PostgreSQL database and one
 * shared session store: a grant made through a landing on one instance opens the guarded route on
 * the other, and a kept form confirmed on both at once runs its handler once.
 */
import { randomBytes } from 'node:crypto';
import session from 'express-session';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, testAppSite } from '../support/agent.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { useTestEmulator } from '../support/emulator.ts';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../support/postgres.ts';
import { confirmForm, guardedRoutes, SCOPES, type Ran } from '../support/step-up.ts';

const CLIENT_ID = 'step-up-instances';
const CLIENT_SECRET = `step-up-secret-${randomBytes(8).toString('hex')}`;
/** The one address users reach both instances at (a load balancer's). */
const PUBLIC_URL = 'http://localhost:3911';

const emulator = useTestEmulator({
  clients: [{ clientId: CLIENT_ID, secret: CLIENT_SECRET, returnUrl: `${PUBLIC_URL}/verify/return` }],
});

/** The same browser, sent to instance `to` by the load balancer: its cookies go with it. */
function onInstance(user: Agent, from: TestApp, to: TestApp): Agent {
  const moved = new Agent(testAppSite(to.url, PUBLIC_URL));
  moved.csrf = user.csrf;
  moved.jar.set(new URL(to.url).origin, new Map(user.jar.get(new URL(from.url).origin)));
  for (const [origin, cookies] of user.jar) if (origin !== new URL(from.url).origin) moved.jar.set(origin, cookies);
  return moved;
}

describe.skipIf(postgresUnavailable !== undefined)('step-up across two instances on one PostgreSQL database', () => {
  let database: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  const ran: Ran[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    const shared = { store: new session.MemoryStore(), secret: randomBytes(16).toString('hex') };
    const instance = () =>
      startTestApp({
        database: { url: database.url },
        publicUrl: PUBLIC_URL,
        service: async () => ({ baseUrl: emulator.url, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET }),
        session: shared,
        kit: { scopes: [...SCOPES] },
        ownRoutes: guardedRoutes(ran),
      });
    [a, b] = await Promise.all([instance(), instance()]);
  }, 60_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await database?.drop();
  });

  it('a grant made by a landing on one instance opens the guarded route on the other', async () => {
    const onA = await a.agent().signIn('alice');
    const page = await onA.request('/security');
    const form = confirmForm(page.body);
    const started = await onA.start(form.action, { intent: form.intent });
    const location = await onA.verifyOnHostedPage(started, await emulator.control.codeFor(started.sessionId));
    const onB = onInstance(onA, a, b);
    const landing = await onB.request(new URL(location).pathname + new URL(location).search);
    expect(landing.status).toBe(303);
    expect(landing.location).toBe('/security');
    const opened = await onInstance(onB, b, a).request('/security');
    expect(opened.status).toBe(200);
    expect(opened.body).toContain('codes for alice');
  });

  it('a kept form confirmed on both instances at once runs its handler once', async () => {
    const onA = await a.agent().signIn('alice');
    const kept = await onA.request('/accounts/acct-9/payee', {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: PUBLIC_URL,
        'sec-fetch-site': 'same-origin',
      },
      body: 'iban=NL91ABNA',
    });
    const form = confirmForm(kept.body);
    const started = await onA.start(form.action, { intent: form.intent });
    const location = await onA.verifyOnHostedPage(started, await emulator.control.codeFor(started.sessionId));
    const landing = await onA.request(new URL(location).pathname + new URL(location).search);
    const confirm = await onA.request(landing.location!);
    const intentId = /name="_verify_kit_intent" value="([^"]+)"/.exec(confirm.body)![1]!;
    const csrf = /name="_csrf" value="([^"]+)"/.exec(confirm.body)![1]!;
    const before = ran.filter((r) => r.route === 'payee').length;
    const onB = onInstance(onA, a, b);
    const answers = await Promise.all(
      [onA, onB, onA, onB].map((user) =>
        user.postForm(
          '/accounts/acct-9/payee',
          { _csrf: csrf, _verify_kit_intent: intentId },
          { origin: PUBLIC_URL, 'sec-fetch-site': 'same-origin' },
        ),
      ),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409, 409, 409]);
    expect(ran.filter((r) => r.route === 'payee').length).toBe(before + 1);
  });
});
