/**
 * An operator's block of a country refuses a start to a number the app holds with digits after a
 * real number of that country ("+447400123456999": the UK mobile +447400123456 and three more,
 * which the service takes and texts): the destination policy judges it as the real number it starts
 * with, and the pumping rules count it under that number's country as well as its block. It was
 * keyed under country 'ZZ' (the parser places such a number in no country of a shared calling
 * code), so a block of GB let it through and GB's counts never saw its texts. On both stores.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ActionDefinition } from '../../middleware/index.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

const HOUR = 3_600_000;
const AT = (Math.floor(Date.now() / HOUR) + 1) * HOUR + 10 * 60_000;

const NUMBERS: Record<string, string> = {
  plain: '+447400123456',
  padded: '+447400123456999',
};

const phoneOnFile: ActionDefinition<unknown> = {
  name: 'phone_on_file',
  operationSensitivity: 'normal',
  successPath: '/done/phone',
  fulfil: () => {},
};

describeEachAppStore('an operator block of a country and a padded number the app holds', (_s, storeOptions) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: {
        actions: [phoneOnFile],
        resolveUser: (req) => {
          const name = (req.session as { user?: string }).user?.replace(/-\d+$/, '');
          const destination = name === undefined ? undefined : NUMBERS[name];
          return destination === undefined ? null : { userRef: `user-${name}`, destination };
        },
        // An operator's block refuses in every mode.
        pumping: { mode: 'refuse' },
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it("block({ country: 'GB' }) refuses a start to a GB mobile with digits after it, as it refuses the mobile itself; nothing is texted", async () => {
    await app.clock.pinned(AT, async () => {
      await app.kit.pumping.block({ country: 'GB' }, 1);
      const plain = await (await app.agent().signIn('plain-1')).tryStart('phone_on_file');
      const padded = await (await app.agent().signIn('padded-1')).tryStart('phone_on_file');
      const outbox = (await app.emulator.control.outbox()).map((text) => text.to);
      expect(
        { plain: plain.status, padded: padded.status, texted: outbox },
        `a start to ${NUMBERS.padded} under a block of GB`,
      ).toEqual({ plain: 429, padded: 429, texted: [] });
    });
  });
});
