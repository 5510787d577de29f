/**
 * Start limits of the app's own (`limits: { consume }`) are the integrator's code: a KitError they
 * throw is in its own words and may name the number ("no more texts to +447400123456"). Its log
 * line has the number masked, as any other error of the app's code. The kit's own refusal, whose
 * wait may be a run of seven digits or more ("try again in 2592000 s"), is logged as written.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createStartLimits, KitError, KitErrorCode } from '../../middleware/index.ts';
import type { StartLimits } from '../../middleware/limits/start-limits.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import { addPhoneAction } from '../support/actions.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

const TYPED = '+447400123456';
const MONTH_S = 30 * 24 * 3600;

let app: TestApp;
const counter = createSqliteStore({ database: ':memory:' });
/** The kit's own limits: one number a month per user. */
const kitLimits = createStartLimits({
  store: counter,
  perUserNumbers: { points: 1, durationSeconds: MONTH_S },
  destinationKey: 'k'.repeat(32),
});
let own = true;
const limits: StartLimits = {
  consume: (req, who) => {
    if (own) throw new KitError(KitErrorCode.RateLimited, `no more texts to ${who.destination}`);
    return kitLimits.consume(req, who);
  },
};

beforeAll(async () => {
  app = await startTestApp({ kit: { actions: [addPhoneAction()], limits } });
});
afterAll(async () => {
  await app?.close();
  await counter.close();
});

/** The messages of the start's rate_limited lines. */
const refusals = () =>
  app.logs
    .map((line) => JSON.parse(line) as { route?: string; code?: string; msg?: string })
    .filter((line) => line.route === 'start' && line.code === 'rate_limited')
    .map((line) => line.msg);

it("the app's own limits' KitError naming the number: logged with it masked", async () => {
  own = true;
  const user = await app.agent().signIn('own-limits');
  expect((await user.tryStartWithNumber('add_phone', '+44 7400 123456')).status).toBe(429);
  expect(refusals()).toEqual(['no more texts to ••\u00a056']);
  for (const line of app.logs) expect(line).not.toContain(TYPED.slice(3));
});

it("the kit's own limits' refusal: logged as written, its wait whole", async () => {
  own = false;
  const before = refusals().length;
  const user = await app.agent().signIn('kit-limits');
  expect((await user.tryStartWithNumber('add_phone', '+44 7400 123457')).status).toBe(200);
  expect((await user.tryStartWithNumber('add_phone', '+44 7400 123458')).status).toBe(429);
  expect(refusals().slice(before)).toEqual([
    expect.stringMatching(/^Too many verification attempts; try again in \d{7} s\.$/),
  ]);
});
