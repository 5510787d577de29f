/**
 * The service's 429 at the start and at the landing, with the emulator's per-client rate limits: a
 * create is retried with its own Idempotency-Key after the Retry-After and sends one SMS; a create
 * that stays refused shows "busy, try again shortly" and spends none of the user's start budget; a
 * landing that meets a 429 shows the pending page and the sweep finishes the attempt later.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { UNPACED } from '../../middleware/sweep/pacing.ts';
import { NO_PENDING_RECHECKS, startTestApp, type TestApp } from '../support/app.ts';
import { leaks, newSeen } from '../support/seen.ts';
import { basicAuth } from '../support/emulator.ts';

const seen = newSeen();

/** Spends the client's one create a second, so the next create meets a 429. */
let spenders = 0;
async function spendCreateBudget(app: TestApp) {
  const spender = await app.agent(seen).signIn(`spender${++spenders}`);
  await spender.start('grant_badge');
}

describe('429 on create', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      // The user may start once an hour: a busy start must not use that one start up.
      kit: {
        limits: {
          perUser: { points: 1, durationSeconds: 3600 },
          perDestination: { points: 100, durationSeconds: 60 },
          perIp: { points: 100, durationSeconds: 60 },
        },
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });
  afterEach(async () => {
    await app.emulator.control.setRateLimits({ createsPerSecond: 0 });
  });

  it('is retried with the same Idempotency-Key after its Retry-After: one session, one SMS', async () => {
    await app.emulator.control.setRateLimits({ createsPerSecond: 1 });
    await spendCreateBudget(app);
    const before = await app.emulator.control.stats();
    const alice = await app.agent(seen).signIn('alice');
    const began = Date.now();
    const handoff = await alice.start('grant_badge');
    const after = await app.emulator.control.stats();
    expect(handoff.handoff).toBeTruthy();
    expect(after.createsLimited - before.createsLimited).toBeGreaterThanOrEqual(1);
    expect(Date.now() - began).toBeGreaterThanOrEqual(900); // waited out Retry-After: 1
    expect(after.smsSent - before.smsSent).toBe(1);
    const keysUsedNow = Object.keys(after.smsByIdempotencyKey).filter((k) => !(k in before.smsByIdempotencyKey));
    expect(keysUsedNow.map((k) => after.smsByIdempotencyKey[k])).toEqual([1]);
    const attempt = await app.latestAttempt();
    const location = await alice.verifyOnHostedPage({ ...handoff, sessionId: attempt.sessionId });
    expect((await alice.request(location)).status).toBe(303);
    expect(app.grants(attempt.sessionId)).toBe(1);
  });

  it('still refused after the bounded wait: the busy page, nothing stored, and the start not counted', async () => {
    await app.emulator.control.setRateLimits({ createsPerSecond: 0.01 }); // one create per 100 s
    await spendCreateBudget(app);
    const bob = await app.agent(seen).signIn('bob');
    const attempts = await app.attemptCount();
    const began = Date.now();
    const busy = await bob.postStart({ _csrf: bob.csrf, action: 'grant_badge' });
    expect(Date.now() - began).toBeLessThan(5000); // Retry-After 100 s is beyond the busy budget: no wait
    expect(busy.status).toBe(503);
    expect(busy.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await busy.text()).toContain('busy right now');
    expect(await app.attemptCount()).toBe(attempts);
    // Bob may start once an hour: the refused start gave its point back, so this one is allowed.
    await app.emulator.control.setRateLimits({ createsPerSecond: 0 });
    const handoff = await bob.start('grant_badge');
    expect(handoff.handoff).toBeTruthy();
    const again = await bob.postStart({ _csrf: bob.csrf, action: 'grant_badge' });
    expect(again.status).toBe(429); // and the hour's budget holds once a start was really made
  });

  it('leaks: none in this suite', () => {
    expect(leaks(app, seen)).toEqual([]);
  });
});

describe('429 at the landing', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ kit: { landing: NO_PENDING_RECHECKS } });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('shows the pending page, fulfils nothing, slows the sweep, and the sweep fulfils it once later', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const handoff = await alice.start('grant_badge');
    const attempt = await app.latestAttempt();
    const location = await alice.verifyOnHostedPage({ ...handoff, sessionId: attempt.sessionId });
    await app.emulator.control.setRateLimits({ statusReadsPerSecond: 0.01 });
    await app.store.updateSweepPace?.(() => UNPACED);
    // The one read a hundred seconds allows is spent by someone else first.
    await fetch(`${app.emulator.url}/session/x`, {
      headers: { authorization: basicAuth({ clientId: app.clientId, secret: app.secret }) },
    });
    const landing = await alice.request(location);
    expect(landing.status).toBe(200);
    expect(await landing.text()).toContain('Confirming your verification');
    expect(app.grants(attempt.sessionId)).toBe(0);
    expect((await app.latestAttempt()).outcome).toBe('pending');
    const pace = await app.store.updateSweepPace!(() => undefined);
    expect(pace.pausedUntil).toBeGreaterThan(Date.now()); // every sweep waits out the Retry-After
    await app.emulator.control.setRateLimits({ statusReadsPerSecond: 0 });
    await app.store.updateSweepPace!(() => UNPACED);
    const report = await app.clock.shifted(10 * 60_000, () => app.kit.runSweep());
    expect(report.fulfilled).toBe(1);
    expect(app.grants(attempt.sessionId)).toBe(1);
  });
});

describe("the kit's sweep.maxReadsPerSecond", () => {
  const CAP = 5;
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ kit: { sweep: { maxReadsPerSecond: CAP } } });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('paces kit.runSweep: 8 status reads at 5 a second take over a second, and all 8 are fulfilled once', async () => {
    const sessions: string[] = [];
    for (let i = 0; i < 8; i++) {
      const user = await app.agent(seen).signIn(`capped${i}`);
      const handoff = await user.start('grant_badge');
      const attempt = await app.latestAttempt();
      // Verified on the hosted page, and the user never comes back: only the sweep learns the outcome.
      await user.verifyOnHostedPage({ ...handoff, sessionId: attempt.sessionId });
      sessions.push(attempt.sessionId);
    }
    const before = await app.emulator.control.stats();
    const began = Date.now();
    const report = await app.clock.shifted(10 * 60_000, () => app.kit.runSweep({ concurrency: 8 }));
    const seconds = (Date.now() - began) / 1000;
    const reads = (await app.emulator.control.stats()).statusReads - before.statusReads;
    expect(report).toMatchObject({ fulfilled: 8, errors: 0 });
    expect(reads).toBe(8);
    // At most one read saved up, then one every 1/5 s: 7 more reads need at least 1.4 s (unpaced: ~50 ms).
    expect(seconds).toBeGreaterThan((reads - 1) / CAP - 0.1);
    expect(sessions.map((s) => app.grants(s))).toEqual(sessions.map(() => 1));
  });
});
