/**
 * A refused start leaves no counter row behind but its refusal's count, on SQLite and PostgreSQL:
 * a refusal spends no text and no budget, so an attacker posting refused starts to numbers in new
 * blocks, from one account, would otherwise add a row per start, kept 15 days, as fast as HTTP
 * allows. The check counts the text under every key of the start and gives it back when refused;
 * a row that only held that text goes with it. The rules read the same counts either way.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { PumpingDimension } from '../../middleware/store/types.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { GENEROUS_START_LIMITS } from '../support/limits.ts';
import { addPhoneAction } from '../support/actions.ts';

const HOUR = 3_600_000;
/** Nigerian mobiles, each in a block of its own: four never verified trip the country's hourly rule. */
const TRIP = ['+2348031000001', '+2348032000001', '+2348033000001', '+2348034000001'];
const REFUSED = 30;
/** The refused starts' numbers: each in a block no start texted. */
const refusedNumber = (n: number) => `+23480350${String(n).padStart(2, '0')}001`;

describeEachAppStore('the counter rows of refused starts', (_store, storeOptions) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: {
        actions: [addPhoneAction()],
        // Every agent is 127.0.0.1: the address rules out of the way.
        pumping: { mode: 'refuse', thresholds: { address: { dailyFloor: 100_000, hourlyFloor: 100_000 } } },
        limits: GENEROUS_START_LIMITS,
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  /** Keys of `dimension` with a counter row in the last day. */
  const keys = async (dimension: PumpingDimension) =>
    (await app.store.pumping!.countsByDay({ dimension, hour: Math.floor(Date.now() / HOUR), days: 1 })).map(
      (c) => c.key,
    );

  it('refused starts to numbers in new blocks add no block, user or address-country row; their refusals are counted', async () => {
    for (const phone of TRIP) {
      const user = await app.agent().signIn(`someone-${phone}`);
      expect((await user.tryStartWithNumber('add_phone', phone)).status).toBe(200);
    }
    const before = { block: await keys('block'), user: await keys('user'), pairs: await keys('address_country') };
    const attacker = await app.agent().signIn('attacker');
    for (let n = 0; n < REFUSED; n++) {
      expect((await attacker.tryStartWithNumber('add_phone', refusedNumber(n))).status).toBe(429);
    }
    expect(await keys('block')).toEqual(before.block);
    expect(await keys('user')).toEqual(before.user);
    expect(await keys('address_country')).toEqual(before.pairs);
    const now = Date.now();
    const reading = await app.store.pumping!.readPumping({
      keys: [{ dimension: 'country', key: 'NG' }],
      address: '',
      hour: Math.floor(now / HOUR),
      now,
    });
    expect(reading.counts[0]?.refusedThisHour).toBe(REFUSED);
    expect(reading.counts[0]?.sentThisHour).toBe(TRIP.length);
  });
});
