/**
 * A return (the landing, the mobile completion) for an attempt still pending past the 24 h window,
 * on SQLite and PostgreSQL: the service no longer has its outcome and the sweep expires it, so it
 * is expired. Nothing is read or fulfilled (even when the service would still say verified), the
 * user is told it expired and offered a new start, never "it will be finished in the background";
 * the sweep records the expiry. Inside the window, to the last minute, the return still fulfils.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { contextOf } from '../../middleware/create-kit.ts';
import { SWEEP_WINDOW_MS } from '../../middleware/index.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { effectCounts, startTestApp, type TestApp } from '../support/app.ts';
import { newSeen } from '../support/seen.ts';

const MINUTE_MS = 60_000;

describeEachAppStore('a return past the 24 h window', (_store, storeOptions) => {
  let app: TestApp;
  let mobile: TestApp;
  const seen = newSeen();
  beforeAll(async () => {
    const [web, app2] = [await storeOptions(), await storeOptions()];
    [app, mobile] = await Promise.all([
      startTestApp(web),
      startTestApp({ ...app2, mobileReturnUrl: 'com.example.kit://verify/return' }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([app?.close(), mobile?.close()]);
  });

  /** A badge started `ageMs` ago by the kit's clock, verified at the service (whose clock is the real one). */
  async function verifiedStartedAgo(ageMs: number) {
    const alice = await app.agent(seen).signIn('alice');
    await app.clock.shifted(-ageMs, () => alice.start('grant_badge'));
    const row = await app.latestAttempt();
    await app.emulator.control.complete(row.sessionId, { outcome: 'verified' });
    return { alice, row };
  }

  it('the landing shows the expired page with a new start, reads nothing and fulfils nothing', async () => {
    const { alice, row } = await verifiedStartedAgo(SWEEP_WINDOW_MS);
    const reads = (await app.emulator.control.stats()).statusReads;

    const landing = await alice.landFor(row.sessionId, row.state);
    const html = await landing.text();

    expect(landing.status).toBe(200);
    expect(html).toContain('Verification expired');
    expect(html).toContain('name="restart"');
    expect(html).not.toContain('finished in the background');
    expect((await app.emulator.control.stats()).statusReads).toBe(reads);
    expect((await effectCounts(app)).get(row.sessionId)).toBeUndefined();

    // The sweep records the expiry, as it does for every attempt nobody returned to in time.
    await runSweep(contextOf(app.kit), { owner: 'landing-window' });
    expect(await app.attempt(row.sessionId)).toMatchObject({ outcome: 'expired' });
    expect((await effectCounts(app)).get(row.sessionId)).toBeUndefined();
  });

  it('a minute inside the window the landing still reads and fulfils', async () => {
    const { alice, row } = await verifiedStartedAgo(SWEEP_WINDOW_MS - MINUTE_MS);
    const landing = await alice.landFor(row.sessionId, row.state);
    expect(landing.status).toBe(303);
    expect(await app.attempt(row.sessionId)).toMatchObject({ outcome: 'fulfilled' });
    expect((await effectCounts(app)).get(row.sessionId)).toBe(1);
  });

  it('the mobile completion answers expired, reads nothing and fulfils nothing', async () => {
    const started = await mobile.clock.shifted(-SWEEP_WINDOW_MS, () =>
      fetch(`${mobile.url}/verify/start`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-test-user': 'bob' },
        body: JSON.stringify({ action: 'grant_badge' }),
      }),
    );
    expect(started.status).toBe(200);
    const row = await mobile.latestAttempt();
    await mobile.emulator.control.complete(row.sessionId, { outcome: 'verified' });
    const reads = (await mobile.emulator.control.stats()).statusReads;

    const completion = await fetch(`${mobile.url}/verify/mobile/complete`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-test-user': 'bob' },
      body: JSON.stringify({ session_id: row.sessionId, state: row.state }),
    });

    expect(completion.status).toBe(200);
    expect(await completion.json()).toEqual({ outcome: 'expired' });
    expect((await mobile.emulator.control.stats()).statusReads).toBe(reads);
    expect((await effectCounts(mobile)).get(row.sessionId)).toBeUndefined();
  });

  it('once the service has forgotten the session (its 24 h passed too), the page still says expired, not pending', async () => {
    const alice = await app.agent(seen).signIn('alice');
    await app.clock.shifted(-SWEEP_WINDOW_MS, () => alice.start('grant_badge'));
    const row = await app.latestAttempt();
    // The service's outcome is readable for 24 h: after that its id reads as unknown (pending).
    await app.emulator.control.advanceClock(SWEEP_WINDOW_MS / 1000 + 60);

    const landing = await alice.landFor(row.sessionId, row.state);
    const html = await landing.text();

    expect(landing.headers.get('x-verify-kit-outcome')).toBeNull();
    expect(html).toContain('Verification expired');
    expect(html).toContain('name="restart"');
  });
});
