/**
 * A text its user verified is counted verified for the SMS pumping rules even when nothing is
 * applied: its action is no longer registered (a kit restarted without it reads it), or a newer
 * attempt of the same user and action was applied first (the older one's landing reads it, until
 * it is counted). A superseded attempt its user never verified counts nothing. On SQLite and
 * PostgreSQL.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { contextOf } from '../../middleware/create-kit.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { countryCountsNow } from '../support/pumping-counts.ts';
import { GENEROUS_START_LIMITS } from '../support/limits.ts';
import { addPhoneAction } from '../support/actions.ts';
import { withMethodReplaced } from '../support/replaced-method.ts';

describeEachAppStore('a verified text that is never applied', (_store, storeOptions) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: { actions: [addPhoneAction()], pumping: { mode: 'refuse' }, limits: GENEROUS_START_LIMITS },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  /** The texts verified to France in the hour they were sent. */
  const verifiedInFrance = async () => (await countryCountsNow(app, 'FR')).verifiedThisHour;

  it('is counted when its action is no longer registered, and nothing is fulfilled', async () => {
    const user = await app.agent().signIn('action-gone');
    const started = await user.start('add_phone', { phone: '+33612345681' });
    await app.emulator.control.complete(started.sessionId, { outcome: 'verified' });
    const before = await verifiedInFrance();
    // The kit as it runs after a restart without the action.
    const withoutTheAction = { ...contextOf(app.kit), actions: new Map(), now: () => app.clock.now() + 181_000 };
    const report = await runSweep(withoutTheAction, { owner: 'kit-without-the-action' });
    expect(report.errors).toBe(1);
    expect((await app.store.findAttemptByState(started.state))?.outcome).toBe('pending');
    expect(await verifiedInFrance()).toBe(before + 1);
  });

  it('is counted, once, when a newer attempt was applied first; an older one never verified is not', async () => {
    const user = await app.agent().signIn('superseded-verified');
    const older = await user.start('add_phone', { phone: '+33612345682' });
    const newer = await user.start('add_phone', { phone: '+33612345683' });
    await app.emulator.control.complete(newer.sessionId, { outcome: 'verified' });
    expect((await user.landFor(newer.sessionId, newer.state)).status).toBe(303);
    expect((await app.store.findAttemptByState(older.state))?.outcome).toBe('superseded');
    const before = await verifiedInFrance();
    // Not verified (yet): its landing counts nothing.
    expect((await user.landFor(older.sessionId, older.state)).status).toBe(200);
    expect(await verifiedInFrance()).toBe(before);
    await app.emulator.control.complete(older.sessionId, { outcome: 'verified' });
    expect((await user.landFor(older.sessionId, older.state)).status).toBe(200);
    expect(await verifiedInFrance()).toBe(before + 1);
    // Counted: its reloads read the service no more (each read costs the integrator).
    const client = contextOf(app.kit).client;
    const getSession = client.getSession.bind(client);
    let reads = 0;
    const counted = (sessionId: string) => {
      reads += 1;
      return getSession(sessionId);
    };
    await withMethodReplaced(client, 'getSession', counted, async () => {
      expect((await user.landFor(older.sessionId, older.state)).status).toBe(200);
      expect((await user.landFor(older.sessionId, older.state)).status).toBe(200);
    });
    expect(reads).toBe(0);
    expect(await verifiedInFrance()).toBe(before + 1);
    expect((await app.store.findAttemptByState(older.state))?.outcome).toBe('superseded');
  });
});
