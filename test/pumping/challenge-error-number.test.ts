/**
 * The app's challenge that throws a KitError naming the typed number ("no token for
 * +254710000001") counts as not passed, and its log line has the number masked, as any error of the
 * app's code: a full number appears only in the form it was typed into.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { KitError, KitErrorCode } from '../../middleware/index.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { GENEROUS_START_LIMITS } from '../support/limits.ts';
import { addPhoneAction } from '../support/actions.ts';

/** Kenyan mobiles, each in a block of its own (so only the country's rules are in play). */
const kenyan = (n: number) => `+2547${String(10 + n).padStart(2, '0')}000001`;

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({
    kit: {
      actions: [addPhoneAction()],
      pumping: {
        mode: 'refuse',
        // Every agent is 127.0.0.1: the address rules out of the way.
        thresholds: { address: { dailyFloor: 100_000, hourlyFloor: 100_000 } },
        challenge: {
          verify: (req) => {
            throw new KitError(
              KitErrorCode.RateLimited,
              `no token for ${String((req.body as { phone?: unknown }).phone)}`,
            );
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

it("a challenge's KitError naming the typed number: not passed, logged with the number masked", async () => {
  const startTo = async (phone: string) =>
    (await app.agent().signIn(`someone-${phone}`)).tryStartWithNumber('add_phone', phone);
  const at = (Math.floor(Date.now() / 3_600_000) + 1) * 3_600_000 + 5 * 60_000;
  await app.clock.pinned(at, async () => {
    // Four texts trip the country's hourly rule (3 with no history): the fifth start is challenged.
    for (let n = 0; n < 4; n++) expect((await startTo(kenyan(n))).status, `start ${n}`).toBe(200);
    const challenged = kenyan(4);
    expect((await startTo(challenged)).status).toBe(429);

    const failed = app.logs
      .map((line) => JSON.parse(line) as { msg?: string; err?: { message?: string } })
      .filter((line) => line.msg === 'the SMS pumping challenge failed; counted as not passed');
    expect(failed.map((line) => line.err?.message)).toEqual(['no token for ••\u00a001']);
    for (const line of app.logs) expect(line).not.toContain(challenged.slice(3));
  });
});
