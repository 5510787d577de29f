/**
 * An action's fulfil on SQLite written as integrators write it, one better-sqlite3 statement whose
 * RunResult it returns: `(tx, a) => tx.prepare('...').run(...)`. It typechecks as an
 * `ActionDefinition<Database>` (what fulfil returns is ignored), and its write commits with the
 * fulfilment mark once, whether the user lands once or reloads.
 */
import type { Database } from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActionDefinition } from '../../middleware/index.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { newSeen } from '../support/seen.ts';

/** Typed for the SQLite store's transaction handle: without the wide return type, this does not compile. */
const addBadge: ActionDefinition<Database> = {
  name: 'add_badge',
  operationSensitivity: 'normal',
  successPath: '/done/badge',
  fulfil: (tx, attempt) =>
    tx
      .prepare('INSERT INTO test_effects (session_id, state, user_ref, detail, at) VALUES (?, ?, ?, ?, ?)')
      .run(attempt.sessionId, attempt.state, attempt.userRef, 'one statement', attempt.startedAt),
};

let app: TestApp;
const seen = newSeen();

beforeAll(async () => {
  // The test app's kit is typed for any store; this action is the SQLite one it runs on.
  app = await startTestApp({ kit: { actions: [addBadge as unknown as ActionDefinition<unknown>] } });
});
afterAll(async () => {
  await app?.close();
});

describe('fulfil as one better-sqlite3 statement', () => {
  it('writes its row with the fulfilment, once, through a landing and its reload', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const handoff = await alice.start('add_badge');
    const { sessionId } = await app.latestAttempt();
    const location = await alice.verifyOnHostedPage({ ...handoff, sessionId });

    expect((await alice.request(location)).headers.get('location')).toBe('/done/badge');
    expect((await alice.request(location)).headers.get('location')).toBe('/done/badge');
    expect(app.grants(sessionId)).toBe(1);
    expect((await app.attempt(sessionId))?.outcome).toBe('fulfilled');
  });
});
