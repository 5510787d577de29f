/**
 * A `fulfil` that returns a promise on SQLite (a plain function, so `createVerificationKit` cannot
 * see it coming): its transaction is synchronous, so whatever the promise does later runs after
 * the rollback, outside any transaction. The kit refuses it at its first call and never calls it
 * again in that process: not on a reload, not in the sweep (whose group commit would call it once
 * more), not for another attempt. Nothing is marked fulfilled, and the attempts stay pending.
 */
import type { Database } from 'better-sqlite3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { contextOf } from '../../middleware/create-kit.ts';
import type { ActionDefinition } from '../../middleware/index.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import { effectCounts, startTestApp, type TestApp } from '../support/app.ts';
import { newSeen } from '../support/seen.ts';

let app: TestApp;
const seen = newSeen();
/** Calls of the action, and of the part of it that runs once its promise settles. */
const calls = { started: 0, settled: 0 };

/** Writes its row only after an await, as a fulfil calling an async helper first would. */
const writesLater: ActionDefinition<Database> = {
  name: 'grant_badge',
  operationSensitivity: 'normal',
  successPath: '/done/badge',
  ordering: 'independent',
  fulfil: (tx, attempt) => {
    calls.started++;
    return Promise.resolve().then(() => {
      calls.settled++;
      tx.prepare('INSERT INTO test_effects (session_id, state, user_ref, detail, at) VALUES (?, ?, ?, ?, ?)').run(
        attempt.sessionId,
        attempt.state,
        attempt.userRef,
        'late badge',
        Date.now(),
      );
    });
  },
};

beforeAll(async () => {
  app = await startTestApp({ kit: { actions: [writesLater as ActionDefinition<unknown>] } });
});
afterAll(async () => {
  await app?.close();
});

async function verifiedBadge(user: string) {
  const agent = await app.agent(seen).signIn(user);
  await agent.start('grant_badge');
  const row = await app.latestAttempt();
  await app.emulator.control.complete(row.sessionId, { outcome: 'verified' });
  return { agent, row };
}

it('is called once, then refused without being called: its late writes happen once, never per retry', async () => {
  const first = await verifiedBadge('alice');
  const second = await verifiedBadge('bob');
  const third = await verifiedBadge('carol');

  const landing = await first.agent.landFor(first.row.sessionId, first.row.state);
  expect(landing.status).toBe(500);
  expect(await landing.text()).not.toMatch(/\.ts:\d+/);
  // A reload, the other attempts' landings and a sweep run (its group commit included).
  expect((await first.agent.landFor(first.row.sessionId, first.row.state)).status).toBe(500);
  expect((await second.agent.landFor(second.row.sessionId, second.row.state)).status).toBe(500);
  const report = await runSweep({ ...contextOf(app.kit), now: () => Date.now() + 10 * 60_000 }, { owner: 'late' });
  await new Promise((resolve) => setImmediate(resolve));

  expect(calls).toEqual({ started: 1, settled: 1 });
  expect(report.fulfilled).toBe(0);
  expect(report.errors).toBe(3);
  for (const { row } of [first, second, third]) {
    expect(await app.attempt(row.sessionId)).toMatchObject({ outcome: 'pending' });
  }
  // The one late write that could not be stopped: the first call's, outside the transaction.
  expect([...(await effectCounts(app)).values()]).toEqual([1]);
  const refusals = app.logs.filter((line) => line.includes('fulfil must be synchronous'));
  expect(refusals.length).toBeGreaterThanOrEqual(4);
  expect(refusals.every((line) => line.includes('not called again'))).toBe(true);
});
