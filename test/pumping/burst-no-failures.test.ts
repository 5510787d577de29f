/**
 * A burst of starts to one country gets the answers the same starts get one after another, on
 * SQLite and PostgreSQL: 100 concurrent starts to new GB numbers (each its own user and block, the
 * client address out of the rules' way), the kit's default country thresholds, no challenge: each
 * is answered 200 (text sent) or 429 (refused by the rules), never a 500. A failed check is not a
 * refusal: the real users of that country would get an error page.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { GENEROUS_START_LIMITS } from '../support/limits.ts';
import { addPhoneAction } from '../support/actions.ts';

const HOUR = 3_600_000;
const BASE = (Math.floor(Date.now() / HOUR) + 1) * HOUR + 10 * 60_000;
const BURST = 100;
const british = (n: number) => `+447400${String(n).padStart(3, '0')}001`;
/** The kit's error lines: why a start failed. */
const errors: string[] = [];
const logger = {
  info: () => {},
  warn: () => {},
  error: (obj: Record<string, unknown>, msg?: string) => errors.push(`${msg ?? ''} ${JSON.stringify(obj.err ?? '')}`),
};

describeEachAppStore('a burst of starts to one country', (_store, storeOptions) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: {
        actions: [addPhoneAction()],
        pumping: { mode: 'refuse', thresholds: { address: { dailyFloor: 100_000, hourlyFloor: 100_000 } } },
        limits: GENEROUS_START_LIMITS,
        logger,
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it(`${BURST} concurrent starts to GB numbers each answer 200 or 429, never 500`, async () => {
    await app.clock.pinned(BASE, async () => {
      const users = await Promise.all(
        Array.from({ length: BURST }, (_, n) => app.agent().signIn(`burst-${n}-${Math.random()}`)),
      );
      const statuses = await Promise.all(
        users.map(async (user, n) => (await user.tryStartWithNumber('add_phone', british(n))).status),
      );
      const tally: Record<number, number> = {};
      for (const s of statuses) tally[s] = (tally[s] ?? 0) + 1;
      const why = [...new Set(errors.map((e) => e.slice(0, 300)))].join(' | ');
      expect(statuses.filter((s) => s !== 200 && s !== 429).length, `answers: ${JSON.stringify(tally)}; ${why}`).toBe(
        0,
      );
    });
  });
});
