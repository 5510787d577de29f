/**
 * The rule on the countries one address texts holds under a burst, on SQLite and PostgreSQL:
 * concurrent starts from one address to as many countries send what the same starts one after
 * another send (the countries' count each start reads includes the texts of those before it).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { addPhoneAction } from '../support/actions.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const BASE = (Math.floor(Date.now() / HOUR) + 1) * HOUR + 10 * 60_000;
/** Mobiles of twelve countries: every agent is 127.0.0.1, so each start adds a country to the address's. */
const COUNTRIES = [
  '+2348031000001',
  '+254711000001',
  '+233241000001',
  '+84912345001',
  '+919812345002',
  '+33612345678',
  '+256772000001',
  '+263771000001',
  '+255712345678',
  '+237671234567',
  '+923001234567',
  '+8801712345678',
];

describeEachAppStore('the address countries rule under a burst', (_store, storeOptions) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      // Only the countries rule in play: the address's counts, and every country's and block's, out of reach.
      kit: {
        actions: [addPhoneAction()],
        pumping: {
          mode: 'refuse',
          thresholds: {
            address: { dailyFloor: 1000, hourlyFloor: 1000 },
            country: { dailyFloor: 1000, hourlyFloor: 1000 },
            block: { dailyFloor: 1000, hourlyFloor: 1000 },
          },
        },
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  const texts = async () => (await app.emulator.control.stats()).smsSent;
  const startTo = async (phone: string) => {
    const user = await app.agent().signIn(`burst-${phone}-${Math.random()}`);
    return (await user.tryStartWithNumber('add_phone', phone)).status;
  };

  it('concurrent starts to twelve countries send what the same starts one after another send', async () => {
    const sequential = await app.clock.pinned(BASE, async () => {
      const before = await texts();
      for (const phone of COUNTRIES) await startTo(phone);
      return (await texts()) - before;
    });
    // Past three countries without a verification, the address is refused.
    expect(sequential).toBe(4);
    await app.clock.pinned(BASE + 2 * DAY, async () => {
      // Signed in first: the starts leave together.
      const users = await Promise.all(COUNTRIES.map((phone) => app.agent().signIn(`burst-${phone}`)));
      const before = await texts();
      const statuses = await Promise.all(
        users.map(async (user, i) => (await user.tryStartWithNumber('add_phone', COUNTRIES[i]!)).status),
      );
      expect(statuses.filter((s) => s !== 200).every((s) => s === 429)).toBe(true);
      expect((await texts()) - before).toBe(sequential);
    });
  });
});
