/**
 * A start the SMS pumping rules let through with a warning (record mode) is recorded as `warned`
 * before the start budgets and the app's hook have their say: its log line must not say the text
 * was sent. It said "start sent although it matches SMS pumping" for a start the app's
 * beforeCreate then refused (429, nothing sent), so an operator reading the logs counted a text
 * that never went.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { KitError, KitErrorCode } from '../../middleware/index.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { addPhoneAction } from '../support/actions.ts';
import { GENEROUS_START_LIMITS } from '../support/limits.ts';

const HOUR = 3_600_000;
const NOW = (Math.floor(Date.now() / HOUR) + 1) * HOUR + 10 * 60_000;
/** Nigerian mobiles, each in a block of its own: the fifth trips the country's hourly rule. */
const NG = ['+2348031000001', '+2348032000001', '+2348033000001', '+2348034000001'];
/** The number the app's beforeCreate hook refuses. */
const REFUSED_BY_HOOK = '+2348035000001';

const lines: { msg?: string; pumping?: unknown }[] = [];
const at = (obj: Record<string, unknown>, msg?: string) => void lines.push({ ...obj, msg });
const logger = { info: at, warn: at, error: at };

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({
    kit: {
      actions: [addPhoneAction()],
      pumping: { mode: 'record', thresholds: { address: { dailyFloor: 1000, hourlyFloor: 1000 } } },
      limits: GENEROUS_START_LIMITS,
      logger,
      beforeCreate: (_req, attempt) => {
        if (attempt.destination === REFUSED_BY_HOOK) {
          throw new KitError(KitErrorCode.RateLimited, 'Not this number.', { retryAfterSeconds: 60 });
        }
      },
    },
  });
});
afterAll(async () => {
  await app?.close();
});

it("a warned start the app's hook refuses is logged as let through, never as sent", async () => {
  await app.clock.pinned(NOW, async () => {
    for (const phone of NG) {
      const user = await app.agent().signIn(`someone-${phone}`);
      expect((await user.tryStartWithNumber('add_phone', phone)).status).toBe(200);
    }
    const before = (await app.emulator.control.outbox()).length;
    const user = await app.agent().signIn('someone-refused');
    expect((await user.tryStartWithNumber('add_phone', REFUSED_BY_HOOK)).status).toBe(429);
    expect((await app.emulator.control.outbox()).length).toBe(before);
  });
  const warned = lines.filter((line) => line.pumping === 'warned').map((line) => line.msg);
  expect(warned).toHaveLength(1);
  expect(warned[0]).toMatch(/let through by the SMS pumping rules/);
  expect(warned[0]).not.toMatch(/\bsent\b/);
});
