/**
 * The after-commit outcome hook (`onOutcome`): called for fulfilled, failed, expired and superseded
 * attempts with their source (landing, mobile, sweep), after the response (a hook that never
 * finishes does not hold up the redirect), at least once (a throw is re-delivered by the sweep),
 * and never again once it succeeded. The crash between commit and hook is in test/faults/crash.test.ts.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { OutcomeEvent } from '../../middleware/index.ts';
import { contextOf } from '../../middleware/create-kit.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import type { Agent } from '../support/agent.ts';
import { DAY_MS } from '../support/clock.ts';
import { newSeen } from '../support/seen.ts';
import { waitFor } from '../support/wait-for.ts';

let app: TestApp;
let mobile: TestApp;
const seen = newSeen();
const delivered: OutcomeEvent[] = [];
/** What the hook does next: 'ok', throw once, or hang until released. */
let behaviour: 'ok' | 'throw-once' | 'hang' = 'ok';
let release: (() => void) | undefined;

async function onOutcome(event: OutcomeEvent): Promise<void> {
  if (behaviour === 'throw-once') {
    behaviour = 'ok';
    throw new Error('mail server down');
  }
  if (behaviour === 'hang') await new Promise<void>((resolve) => (release = resolve));
  delivered.push(event);
}

beforeAll(async () => {
  [app, mobile] = await Promise.all([
    startTestApp({ kit: { onOutcome } }),
    startTestApp({ kit: { onOutcome }, mobileReturnUrl: 'com.example.kit://verify/return' }),
  ]);
});
afterAll(async () => {
  release?.();
  await Promise.all([app?.close(), mobile?.close()]);
});
beforeEach(() => {
  behaviour = 'ok';
});

async function waitForEvent(sessionId: string): Promise<OutcomeEvent> {
  const find = () => delivered.find((e) => e.sessionId === sessionId);
  await waitFor(() => find() !== undefined, 2000, `the outcome event of ${sessionId}`);
  return find()!;
}

/** SQL: the store reads outcome events only by claiming them (a lease), which would change what is checked. */
const deliveredRow = (on: TestApp, sessionId: string) =>
  on.db
    .prepare('SELECT delivered_at AS deliveredAt, deliveries FROM verify_kit_outcome_events WHERE session_id = ?')
    .get(sessionId) as { deliveredAt: number | null; deliveries: number } | undefined;

const sweepAt = (on: TestApp, offsetMs: number, owner: string) =>
  runSweep({ ...contextOf(on.kit), now: () => Date.now() + offsetMs }, { owner });

async function started(user: Agent, action = 'set_note', note = 'hello') {
  await user.start(action, action === 'set_note' ? { note } : {});
  const row = await app.latestAttempt();
  return { sessionId: row.sessionId, state: row.state };
}

describe('onOutcome', () => {
  it('a fulfilment by the landing is delivered once, after commit, with the destination and params', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const a = await started(alice, 'set_note', 'mail me');
    await app.emulator.control.complete(a.sessionId, { outcome: 'verified' });
    expect((await alice.landFor(a.sessionId, a.state)).status).toBe(303);
    const event = await waitForEvent(a.sessionId);
    expect(event).toMatchObject({
      outcome: 'fulfilled',
      source: 'landing',
      userRef: 'user-alice',
      action: 'set_note',
      params: { note: 'mail me' },
      // Masked: events go to logs and queues (fulfil received the full number).
      destination: '••\u00a011',
      reason: null,
      delivery: 1,
    });
    // Its outbox row exists and is marked delivered, after one delivery (a missing row fails here).
    await waitFor(() => typeof deliveredRow(app, a.sessionId)?.deliveredAt === 'number', 2000, 'the delivered mark');
    expect(deliveredRow(app, a.sessionId)).toEqual({ deliveredAt: expect.any(Number), deliveries: 1 });
    // A reload and a sweep later: nothing is delivered twice.
    await alice.landFor(a.sessionId, a.state);
    await sweepAt(app, 10 * 60_000, 'outcomes-no-redelivery');
    expect(delivered.filter((e) => e.sessionId === a.sessionId)).toHaveLength(1);
  });

  it('a failure and a superseded attempt are delivered with their reason and the newer session', async () => {
    const bob = await app.agent(seen).signIn('bob');
    const failed = await started(bob, 'set_note', 'will fail');
    await app.emulator.control.complete(failed.sessionId, { outcome: 'failed', reason: 'otp_locked' });
    await bob.landFor(failed.sessionId, failed.state);
    const failure = await waitForEvent(failed.sessionId);
    expect(failure).toMatchObject({ outcome: 'failed', reason: 'otp_locked', source: 'landing' });

    const older = await started(bob, 'set_note', 'older');
    const newer = await started(bob, 'set_note', 'newer');
    await app.emulator.control.complete(newer.sessionId, { outcome: 'verified' });
    await bob.landFor(newer.sessionId, newer.state);
    const superseded = await waitForEvent(older.sessionId);
    expect(superseded).toMatchObject({ outcome: 'superseded', supersededBy: newer.sessionId, source: 'landing' });
  });

  it('an attempt the sweep expires is delivered with source sweep', async () => {
    const bob = await app.agent(seen).signIn('bob');
    // Started two days ago by the kit's clock: past the 24 h window, never finished.
    const a = await app.clock.shifted(-2 * DAY_MS, () => started(bob, 'grant_badge'));
    const report = await sweepAt(app, 0, 'outcomes-expiry');
    expect(report.outcomesDelivered).toBeGreaterThanOrEqual(1);
    expect(await waitForEvent(a.sessionId)).toMatchObject({ outcome: 'expired', source: 'sweep' });
  });

  it('a mobile completion is delivered with source mobile', async () => {
    const response = await fetch(`${mobile.url}/verify/start`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-test-user': 'bob' },
      body: JSON.stringify({ action: 'grant_badge' }),
    });
    expect(response.status).toBe(200);
    const row = await mobile.latestAttempt();
    await mobile.emulator.control.complete(row.sessionId, { outcome: 'verified' });
    await fetch(`${mobile.url}/verify/mobile/complete`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-test-user': 'bob' },
      body: JSON.stringify({ session_id: row.sessionId, state: row.state }),
    });
    const event = await waitForEvent(row.sessionId);
    expect(event).toMatchObject({ outcome: 'fulfilled', source: 'mobile', userRef: 'user-bob' });
  });

  it('a hook that throws is delivered again by the sweep once its retry is due, then never again', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const a = await started(alice, 'grant_badge');
    await app.emulator.control.complete(a.sessionId, { outcome: 'verified' });
    behaviour = 'throw-once';
    expect((await alice.landFor(a.sessionId, a.state)).status).toBe(303);
    for (let i = 0; i < 200 && behaviour === 'throw-once'; i++) await new Promise((r) => setTimeout(r, 10));
    expect(behaviour).toBe('ok'); // the hook ran and threw
    expect(deliveredRow(app, a.sessionId)).toMatchObject({ deliveredAt: null, deliveries: 1 });
    const logged = app.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
    const failedHook = expect.stringContaining('onOutcome failed');
    const warning = expect.objectContaining({ sessionId: a.sessionId, msg: failedHook });
    expect(logged).toContainEqual(warning);

    // Not before its retry is due (10 s on the virtual clock)...
    expect((await sweepAt(app, 1000, 'outcomes-too-early')).outcomesDelivered).toBe(0);
    // ...then once.
    const due = await sweepAt(app, 11_000, 'outcomes-retry');
    expect(due.outcomesDelivered).toBe(1);
    expect(delivered.filter((e) => e.sessionId === a.sessionId)).toEqual([expect.objectContaining({ delivery: 2 })]);
    expect((await sweepAt(app, 60 * 60_000, 'outcomes-after')).outcomesDelivered).toBe(0);
  });

  it('a hook that never finishes does not hold up the redirect', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const a = await started(alice, 'grant_badge');
    await app.emulator.control.complete(a.sessionId, { outcome: 'verified' });
    behaviour = 'hang';
    release = undefined; // set again only by this test's own hanging call
    const landing = await alice.landFor(a.sessionId, a.state);
    expect(landing.status).toBe(303);
    expect(app.grants(a.sessionId)).toBe(1);
    for (let i = 0; i < 200 && release === undefined; i++) await new Promise((r) => setTimeout(r, 10));
    expect(release).toBeDefined(); // the hook is running, and the user already has the answer
    expect(delivered.some((e) => e.sessionId === a.sessionId)).toBe(false);
    release!();
    expect(await waitForEvent(a.sessionId)).toMatchObject({ outcome: 'fulfilled' });
  });
});
