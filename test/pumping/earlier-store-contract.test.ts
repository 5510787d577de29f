/**
 * A pumping store of the app's own written for an earlier kit, whose `reserveSend(query)` reads
 * and counts the text without calling the `decide` the kit passes, never lets a start through
 * unjudged: the start fails (500, the log names the store's method), nothing is sent, and the text
 * it counted is given back. Without the check, an operator's block of the country was passed. On
 * SQLite and PostgreSQL: the earlier store here is the kit's own with reserveSend replaced.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { PumpingReading, PumpingStore } from '../../middleware/store/types.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { GENEROUS_START_LIMITS } from '../support/limits.ts';
import { addPhoneAction } from '../support/actions.ts';
import { withMethodReplaced } from '../support/replaced-method.ts';

describeEachAppStore('a pumping store written for an earlier kit', (_store, storeOptions) => {
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

  const texts = async () => (await app.emulator.control.stats()).smsSent;

  it('fails the start, sends nothing and gives its count back, even to a country an operator blocked', async () => {
    await app.kit.pumping.block({ country: 'NG' });
    const pumping = app.store.pumping as PumpingStore;
    const real = pumping.reserveSend.bind(pumping);
    // The previous contract: read, count the text, return the reading as before it (no `decide`).
    const previous = ((query: Parameters<PumpingStore['reserveSend']>[0]): Promise<PumpingReading> =>
      real(query, () => ({ count: 'text' }))) as PumpingStore['reserveSend'];
    // With the kit's own store the block refuses the start.
    const control = await app.agent().signIn('nigerian-control');
    expect((await control.tryStartWithNumber('add_phone', '+2348031234566')).status).toBe(429);
    const user = await app.agent().signIn('nigerian-user');
    const before = await texts();
    const status = await withMethodReplaced(
      pumping,
      'reserveSend',
      previous,
      async () => (await user.tryStartWithNumber('add_phone', '+2348031234567')).status,
    );
    expect({ status, sent: (await texts()) - before }).toEqual({ status: 500, sent: 0 });
    const hour = Math.floor(app.clock.now() / 3_600_000);
    const country = [{ dimension: 'country' as const, key: 'NG' }];
    const reading = await pumping.readPumping({ keys: country, address: '', hour, now: app.clock.now() });
    expect(reading.counts[0]?.sentThisHour).toBe(0);
    expect(app.logs.some((line) => line.includes('did not call decide'))).toBe(true);
  });
});
