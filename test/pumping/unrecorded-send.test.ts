/**
 * A send whose record failed (attachSend rejected after the check counted the text) is kept and
 * recorded again by a later start, so its verification still counts: before, it was only logged,
 * and that real user's text stayed counted unverified for good. On SQLite and PostgreSQL.
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { RECORD_AGAIN_EVERY_MS } from '../../middleware/pumping/pumping-unrecorded.ts';
import type { PumpingStore } from '../../middleware/store/types.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { countryCountsNow } from '../support/pumping-counts.ts';
import { GENEROUS_START_LIMITS } from '../support/limits.ts';
import { addPhoneAction } from '../support/actions.ts';
import { withMethodReplaced } from '../support/replaced-method.ts';

describeEachAppStore('a send whose record failed', (_store, storeOptions) => {
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

  /** The texts to France of the current hour: sent, and verified. */
  const franceNow = () => countryCountsNow(app, 'FR');

  it('is recorded again at a later start, and its verification then counts', async () => {
    const before = await franceNow();
    const user = await app.agent().signIn('record-fails');
    const fails = () => Promise.reject(new Error('connection reset'));
    const started = await withMethodReplaced(app.store.pumping as PumpingStore, 'attachSend', fails, () =>
      user.start('add_phone', { phone: '+33612345691' }),
    );
    await app.emulator.control.complete(started.sessionId, { outcome: 'verified' });
    expect((await user.landFor(started.sessionId, started.state)).status).toBe(303);
    await app.kit.runSweep();
    // The text was counted sent, and nothing could count it verified.
    expect(await franceNow()).toMatchObject({
      sentThisHour: before.sentThisHour + 1,
      verifiedThisHour: before.verifiedThisHour,
    });

    const later = await app.agent().signIn('a-later-start');
    await app.clock.shifted(RECORD_AGAIN_EVERY_MS + 1000, () => later.start('add_phone', { phone: '+33612345692' }));
    await vi.waitFor(
      async () => {
        await app.kit.runSweep();
        expect((await franceNow()).verifiedThisHour).toBe(before.verifiedThisHour + 1);
      },
      { timeout: 5000, interval: 100 },
    );
  });
});
