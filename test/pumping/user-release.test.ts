/**
 * An operator's release of a user (`kit.pumping.release({ user })`, `fraud release --user REF`)
 * sends that user's starts whatever the counts say, as the docs promise, on SQLite and
 * PostgreSQL: a start to a country whose rules trip, from an address whose rules trip, is sent
 * for the released user and still refused for anyone else; an operator's block still refuses them.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { addPhoneAction } from '../support/actions.ts';

const HOUR = 3_600_000;
const NOW = (Math.floor(Date.now() / HOUR) + 1) * HOUR + 10 * 60_000;
/** Nigerian mobiles, each in a block of its own: only the country's rule is in play. */
const NG = ['+2348031000001', '+2348032000001', '+2348033000001', '+2348034000001', '+2348035000001'];

describeEachAppStore("an operator's release of a user", (_store, storeOptions) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: { actions: [addPhoneAction()], pumping: { mode: 'refuse' } },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it("sends the released user's starts whatever the counts say; anyone else stays refused; a block still refuses", async () => {
    await app.clock.pinned(NOW, async () => {
      const texts = async () => (await app.emulator.control.outbox()).length;
      // Four texts to NG never verified, from one address: the country's hourly rule trips.
      for (const phone of NG.slice(0, 4)) {
        const user = await app.agent().signIn(`someone-${phone}`);
        expect((await user.tryStartWithNumber('add_phone', phone)).status).toBe(200);
      }
      const stranger = await app.agent().signIn('stranger');
      expect((await stranger.tryStartWithNumber('add_phone', NG[4]!)).status).toBe(429);

      const support = await app.agent().signIn('support-1');
      expect((await support.tryStartWithNumber('add_phone', NG[4]!)).status).toBe(429);
      expect(await app.kit.pumping.release({ user: 'user-support-1' }, 1)).toMatchObject({
        dimension: 'user',
        key: 'user-support-1',
        rule: 'allow',
      });
      const before = await texts();
      expect((await support.tryStartWithNumber('add_phone', NG[4]!)).status).toBe(200);
      expect(await texts()).toBe(before + 1);
      expect((await stranger.tryStartWithNumber('add_phone', NG[4]!)).status).toBe(429);

      await app.kit.pumping.block({ user: 'user-support-1' }, 1);
      expect((await support.tryStartWithNumber('add_phone', NG[4]!)).status).toBe(429);
      expect(await texts()).toBe(before + 1);
    });
  });
});
