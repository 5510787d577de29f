/**
 * A number the app holds with digits after a real number ("+447400123456999999": the UK mobile
 * +447400123456 and junk) is texted as it is held, and counted by the SMS pumping rules, on SQLite
 * and PostgreSQL, by the block of the real number it starts with: the decision recorded, what
 * `kit.pumping` reads and the counters' rows never hold the real number whole, and its texts count
 * where that number's do. Ordinary numbers keep their blocks (the number less its last three digits).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ActionDefinition } from '../../middleware/index.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

const HOUR = 3_600_000;
/** Ten minutes into an hour, so every start shares one hour's counts. */
const AT = (Math.floor(Date.now() / HOUR) + 1) * HOUR + 10 * 60_000;

/** The real number inside the padded one, and both without the "+" (as a key or a row may spell it). */
const REAL = '447400123456';
const NUMBERS: Record<string, string> = {
  padded: `+${REAL}999999`,
  /** Three digits after it: fifteen digits, E.164's most, and the texts the emulator takes. */
  'padded-short': `+${REAL}999`,
  ordinary: '+447400125001',
  fictional: '+15550100001',
};

const phoneOnFile: ActionDefinition<unknown> = {
  name: 'phone_on_file',
  operationSensitivity: 'normal',
  successPath: '/done/phone',
  fulfil: () => {},
};

describeEachAppStore(
  'SMS pumping blocks of numbers the app holds with digits after a real number',
  (_s, storeOptions) => {
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
          // One unverified text trips a block: the next start to it is a recorded (warned) decision.
          pumping: {
            mode: 'record',
            thresholds: {
              block: { dailyFloor: 1, hourlyFloor: 1 },
              country: { dailyFloor: 1000, hourlyFloor: 1000 },
              address: { dailyFloor: 1000, hourlyFloor: 1000 },
            },
          },
        },
      });
    });
    afterAll(async () => {
      await app?.close();
    });

    const startAs = async (name: string, n: number) =>
      (await (await app.agent().signIn(`${name}-${n}`)).tryStart('phone_on_file')).status;

    it('counts, records and lists it by its real number’s block, never holding that number whole', async () => {
      await app.clock.pinned(AT, async () => {
        expect(await startAs('padded-short', 1)).toBe(200);
        // Judged and recorded as the others; the emulator then refuses a destination over 15 digits.
        await startAs('padded', 1);
        expect(await startAs('padded-short', 2)).toBe(200);
        for (const name of ['ordinary', 'fictional']) {
          expect(await startAs(name, 1)).toBe(200);
          expect(await startAs(name, 2)).toBe(200);
        }
        const decisions = await app.kit.pumping.decisions({ hours: 2 });
        const reads = JSON.stringify([
          decisions,
          await app.kit.pumping.tripped(),
          await app.kit.pumping.countsByDay({ by: 'block', days: 1 }),
        ]);
        expect(reads).toContain('+447400123');
        expect(reads).not.toContain(REAL);
        for (const table of ['counts', 'sends', 'decisions']) {
          const rows = JSON.stringify(await app.query(`SELECT * FROM verify_kit_pumping_${table}`));
          expect(rows, table).not.toContain(REAL);
        }
        expect(decisions.map((d) => `${d.decision} ${d.block} ${d.userRef}`).sort()).toEqual([
          'warned +15550100 user-fictional',
          // Both padded numbers count in their real number's block: each start after the first trips it.
          'warned +447400123 user-padded',
          'warned +447400123 user-padded-short',
          'warned +447400125 user-ordinary',
        ]);
        expect(app.logs.join('\n')).not.toContain(REAL);
        // Texted as the app holds it.
        const outbox = await app.emulator.control.outbox();
        expect(outbox.map((text) => text.to)).toContain(NUMBERS['padded-short']);
      });
    });
  },
);
