/**
 * A key held by refusals (an attack pressing on it with starts that are refused, so that no text of
 * it is sent any more) keeps refusing every start, whether it has no text left or all of its texts
 * were verified; operators must see it among the keys that trip now, to release it. On SQLite and
 * PostgreSQL.
 */
import { expect, it } from 'vitest';
import { appForTests } from '../support/app-for-tests.ts';
import { describeEachAppStore, type StoreOptions } from '../support/app-stores.ts';
import type { TestApp } from '../support/app.ts';
import type { PumpingKey } from '../../middleware/store/types.ts';
import { GENEROUS_START_LIMITS } from '../support/limits.ts';
import { addPhoneAction } from '../support/actions.ts';

/** An app whose SMS pumping rules refuse, started before the file's tests and closed after: `app()` reads it. */
function appRefusingStarts(storeOptions: StoreOptions, adjust?: (app: TestApp) => void): () => TestApp {
  return appForTests(
    storeOptions,
    { actions: [addPhoneAction()], pumping: { mode: 'refuse' }, limits: GENEROUS_START_LIMITS },
    adjust,
  );
}

/** Counts `times` refusals under `keys` this hour, as the start's check counts a refused start's. */
async function countRefusals(app: TestApp, keys: PumpingKey[], times: number): Promise<void> {
  const now = app.clock.now();
  const query = { keys, address: '', hour: Math.floor(now / 3_600_000), now };
  for (let i = 0; i < times; i++) await app.store.pumping!.reserveSend(query, () => ({ count: 'refusal', keys }));
}

/**
 * Nigeria held by refusals alone (more than three times its hourly threshold, a sixth of its daily
 * floor of 20, and no text sent in 24 hours): a start there is refused and tripped() lists the key.
 */
async function expectHeldWithNoTextLeftListed(app: TestApp): Promise<void> {
  await countRefusals(app, [{ dimension: 'country', key: 'NG' }], 12);
  const user = await app.agent().signIn('nigerian-user');
  expect((await user.tryStartWithNumber('add_phone', '+2348031234567')).status).toBe(429);
  expect(await app.kit.pumping.tripped()).toContainEqual(
    expect.objectContaining({ dimension: 'country', key: 'NG', reasons: expect.arrayContaining(['country_held']) }),
  );
}

describeEachAppStore('a key held by refusals alone', (_store, storeOptions) => {
  const app = appRefusingStarts(storeOptions);

  it('is listed by tripped() while it refuses a start', async () => {
    await expectHeldWithNoTextLeftListed(app());
  });
});

describeEachAppStore('a key held by refusals while all of its texts were verified', (_store, storeOptions) => {
  const app = appRefusingStarts(storeOptions);

  it('is listed by tripped() while it refuses a start', async () => {
    const hour = Math.floor(app().clock.now() / 3_600_000);
    const country = [{ dimension: 'country' as const, key: 'NG' }];
    // Two texts of the last hour, both verified: no rule of the key counts them against it.
    for (const sessionId of ['held-verified-1', 'held-verified-2']) {
      await app().store.pumping!.recordSend({ sessionId, keys: country, hour });
      expect(await app().store.pumping!.markVerified(sessionId)).toBe(true);
    }
    // More than three times Nigeria's hourly threshold (a sixth of its daily floor of 20) of refusals.
    await countRefusals(app(), country, 12);
    const user = await app().agent().signIn('nigerian-user');
    expect((await user.tryStartWithNumber('add_phone', '+2348031234567')).status).toBe(429);
    const tripped = await app().kit.pumping.tripped();
    expect(tripped).toContainEqual(
      expect.objectContaining({ dimension: 'country', key: 'NG', reasons: ['country_held'], unverifiedLastDay: 0 }),
    );
  });
});

describeEachAppStore("a pumping store of the app's own without keysThatMayTrip", (_store, storeOptions) => {
  const app = appRefusingStarts(storeOptions, (started) => {
    // As a store written before the method existed: the operators' reads fall back on the day's counts.
    delete (started.store.pumping as { keysThatMayTrip?: unknown }).keysThatMayTrip;
  });

  it('still has tripped() list a key held with no text left', async () => {
    await expectHeldWithNoTextLeftListed(app());
  });
});
