/**
 * A refusal does not tell an operator's block from the rules' counts by its timing, on SQLite and
 * PostgreSQL: with the app's challenge set, a start the counts would refuse waits on the challenge's
 * check (a CAPTCHA provider's round trip) before its 429, so a blocked start, which no challenge
 * lifts, waits on the same check before the same 429; the check's answer is not read for it.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { GENEROUS_START_LIMITS } from '../support/limits.ts';
import { addPhoneAction } from '../support/actions.ts';

/** The challenge's check: a provider's round trip, failed unless the form says `pass`. */
const CHECK_MS = 400;
let checks = 0;
/** Nigerian mobiles, each in a block of its own: four never verified trip the country's hourly rule. */
const TRIP = ['+2348031000001', '+2348032000001', '+2348033000001', '+2348034000001'];

describeEachAppStore('the timing of a refusal by block or by count', (_store, storeOptions) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: {
        actions: [addPhoneAction()],
        pumping: {
          mode: 'refuse',
          // Every agent is 127.0.0.1: the address rules out of the way.
          thresholds: { address: { dailyFloor: 100_000, hourlyFloor: 100_000 } },
          challenge: {
            verify: async (req) => {
              checks += 1;
              await new Promise((resolve) => setTimeout(resolve, CHECK_MS));
              return (req.body as Record<string, unknown>).captcha === 'pass';
            },
          },
        },
        limits: GENEROUS_START_LIMITS,
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('a blocked start waits on the challenge as a start the counts refuse does, and gets the same 429; a passed challenge lifts no block', async () => {
    for (const phone of TRIP) {
      const user = await app.agent().signIn(`someone-${phone}`);
      expect((await user.tryStartWithNumber('add_phone', phone)).status).toBe(200);
    }
    await app.kit.pumping.block({ country: 'GH' });
    const attacker = await app.agent().signIn('attacker');
    const before = checks;
    const byCount = await attacker.tryStartWithNumber('add_phone', '+2348035000001');
    const byBlock = await attacker.tryStartWithNumber('add_phone', '+233201234567');
    const passedByBlock = await attacker.tryStartWithNumber('add_phone', '+233201234568', { captcha: 'pass' });
    for (const answer of [byCount, byBlock, passedByBlock]) {
      expect(answer.status).toBe(429);
      expect(answer.headers.get('retry-after')).toBe('3600');
      expect(answer.ms).toBeGreaterThanOrEqual(CHECK_MS - 20);
    }
    const page = (body: string) => body.replace(/nonce="[^"]*"/g, '');
    expect(page(byBlock.body)).toBe(page(byCount.body));
    expect(checks - before).toBe(3);
  });
});
