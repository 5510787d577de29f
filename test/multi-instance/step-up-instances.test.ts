/**
 * Step-up on two instances of one app behind one address, on one PostgreSQL database and one
 * shared session store: a grant made through a landing on one instance opens the guarded route on
 * the other, and a kept form confirmed on both at once runs its handler once. A typed number's
 * verification and a step-up verification, each landed and reloaded on both instances while both
 * sweep, are fulfilled once (the number typed) and grant once.
 */
import { randomBytes } from 'node:crypto';
import session from 'express-session';
import type { PoolClient } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActionDefinition } from '../../middleware/index.ts';
import { Agent, testAppSite } from '../support/agent.ts';
import { effectCounts, startTestApp, type TestApp } from '../support/app.ts';
import { useTestEmulator } from '../support/emulator.ts';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../support/postgres.ts';
import { confirmForm, guardedRoutes, SCOPES, type Ran } from '../support/step-up.ts';
import { waitFor } from '../support/wait-for.ts';

const CLIENT_ID = 'step-up-instances';
const CLIENT_SECRET = `step-up-secret-${randomBytes(8).toString('hex')}`;
/** The one address users reach both instances at (a load balancer's). */
const PUBLIC_URL = 'http://localhost:3911';

const emulator = useTestEmulator({
  clients: [{ clientId: CLIENT_ID, secret: CLIENT_SECRET, returnUrl: `${PUBLIC_URL}/verify/return` }],
});

/** Writes the number it is handed beside its session id, in the kit's transaction. */
const addPhone: ActionDefinition<unknown> = {
  name: 'add_phone',
  operationSensitivity: 'normal',
  successPath: '/done/phone',
  destination: 'entered',
  proves: 'destination',
  async fulfil(tx, attempt) {
    await (tx as PoolClient).query(
      'INSERT INTO test_effects (session_id, state, user_ref, detail, at) VALUES ($1, $2, $3, $4, $5)',
      [attempt.sessionId, attempt.state, attempt.userRef, attempt.destination, Date.now()],
    );
  },
};

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
        // Every attempt is due to the sweep at once: it races the landings.
        kit: { scopes: [...SCOPES], actions: [addPhone], sweep: { firstCheckAfterMs: 0 } },
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

  /**
   * The landing on each instance, a reload, and both instances' sweeps, at once. The test holds the
   * attempt's row until at least two of them wait on it, so they meet in the store, not one by one.
   */
  async function landEverywhereAtOnce(onA: Agent, location: string, sessionId: string) {
    const path = new URL(location).pathname + new URL(location).search;
    const onB = onInstance(onA, a, b);
    const holder = await database.pool.connect();
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM verify_kit_attempts WHERE session_id = $1 FOR UPDATE', [sessionId]);
    const all = Promise.all([
      onA.request(path),
      onB.request(path),
      onA.request(path),
      a.kit.runSweep(),
      b.kit.runSweep(),
    ]);
    const waiting = `SELECT count(*) AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`;
    try {
      await waitFor(
        async () => Number((await database.pool.query<{ n: string }>(waiting)).rows[0]?.n) >= 2,
        20_000,
        'two callers waiting on the attempt at once',
      );
    } finally {
      await holder.query('COMMIT');
      holder.release();
    }
    const [landA, landB, reload] = await all;
    return [landA, landB, reload];
  }

  it('a typed number landed on both instances, reloaded and swept by both at once is fulfilled once, with the number typed', async () => {
    const onA = await a.agent().signIn('alice');
    const started = await onA.startWithNumber('add_phone', '+44 7400 123456');
    const location = await onA.verifyOnHostedPage(started, await emulator.control.codeFor(started.sessionId));
    const landings = await landEverywhereAtOnce(onA, location, started.sessionId);
    expect(landings.map((l) => [l.status, l.location])).toEqual([
      [303, '/done/phone'],
      [303, '/done/phone'],
      [303, '/done/phone'],
    ]);
    expect((await effectCounts(a)).get(started.sessionId)).toBe(1);
    const [row] = await a.query<{ detail: string }>('SELECT detail FROM test_effects WHERE session_id = $1', [
      started.sessionId,
    ]);
    expect(row?.detail).toBe('+447400123456');
    expect((await a.store.findAttemptBySessionId(started.sessionId))?.outcome).toBe('fulfilled');
  });

  it('a step-up verification landed on both instances, reloaded and swept by both at once grants once', async () => {
    const onA = await a.agent().signIn('bob');
    const form = confirmForm((await onA.request('/security')).body);
    const started = await onA.start(form.action, { intent: form.intent });
    const location = await onA.verifyOnHostedPage(started, await emulator.control.codeFor(started.sessionId));
    const landings = await landEverywhereAtOnce(onA, location, started.sessionId);
    expect(landings.map((l) => [l.status, l.location])).toEqual([
      [303, '/security'],
      [303, '/security'],
      [303, '/security'],
    ]);
    const grants = await b.kit.grants.list({ userRef: 'user-bob', scope: 'security' });
    expect(grants.filter((g) => g.sessionId === started.sessionId)).toHaveLength(1);
    expect((await onInstance(onA, a, b).request('/security')).body).toContain('codes for bob');
  });
});
