/**
 * Finding: a pumping store written before `reserveSend(query, decide)` lets every start through,
 * an operator's block included.
 *
 * docs/operating.md ("A store of your own") promises that a store written before some of the
 * kit's methods "still works, with less". A pumping store of the app's own written to the
 * previous contract has `reserveSend(query)`: it reads, counts the text and returns the reading,
 * and never calls the `decide` the kit now passes. Expected behaviour: the kit still judges the
 * start (or fails it, never lets it through unchecked): with the country blocked by an operator,
 * a start to it is refused (429) and no text is sent. On SQLite and PostgreSQL: the old-contract
 * store here is the kit's own store with reserveSend replaced by the previous behaviour.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { PumpingReading, PumpingStore } from '../../middleware/store/types.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { GENEROUS_START_LIMITS } from '../support/limits.ts';
import { addPhoneAction } from '../support/actions.ts';
import { withMethodReplaced } from '../support/replaced-method.ts';

describeEachAppStore('a pumping store of the previous contract', (_store, storeOptions) => {
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

  it('a start to a country an operator blocked is refused, not sent', async () => {
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
    const status = await withMethodReplaced(pumping, 'reserveSend', previous, async () =>
      (await user.tryStartWithNumber('add_phone', '+2348031234567')).status,
    );
    expect({ status, sent: (await texts()) - before }).toEqual({ status: 429, sent: 0 });
  });
});
