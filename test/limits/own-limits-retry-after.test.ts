/**
 * Start limits of the app's own (`limits: { consume }`) are the integrator's code: the KitError
 * `rate_limited` they throw may name a wait no header can carry (NaN, Infinity, a word, 1e21).
 * The 429 then says no wait at all, or a whole number of seconds: `Retry-After` is whole
 * delta-seconds (RFC 9110), and the page never reads "Try again in NaN minutes".
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { KitError, KitErrorCode } from '../../middleware/index.ts';
import type { StartLimits } from '../../middleware/limits/start-limits.ts';
import { addPhoneAction } from '../support/actions.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

let app: TestApp;
let wait: unknown;
const limits: StartLimits = {
  consume: () => {
    throw new KitError(KitErrorCode.RateLimited, 'slow down', { retryAfterSeconds: wait as number });
  },
};

beforeAll(async () => {
  app = await startTestApp({ kit: { actions: [addPhoneAction()], limits } });
});
afterAll(async () => {
  await app?.close();
});

/** The 429's Retry-After and the page's "Try again …" sentence, if any. */
async function refusalFor(value: unknown) {
  wait = value;
  const user = await app.agent().signIn(`wait-${String(value)}`);
  const answer = await user.tryStartWithNumber('add_phone', '+44 7400 123456');
  expect(answer.status).toBe(429);
  return { header: answer.headers.get('retry-after'), said: /Try again in [^<.]*/.exec(answer.body)?.[0] };
}

it.each([Number.NaN, Number.POSITIVE_INFINITY, 'soon'])('a wait of %s: the 429 names no wait', async (value) => {
  expect(await refusalFor(value)).toEqual({ header: null, said: undefined });
});

it('a wait of 1e21 s: at most a year, in whole seconds', async () => {
  const year = 366 * 24 * 3600;
  const { header, said } = await refusalFor(1e21);
  expect(header).toBe(String(year));
  expect(said).not.toMatch(/e\+|NaN|Infinity/);
});

it('a wait of 90.5 s: 91 whole seconds, said as the kit says its own', async () => {
  expect(await refusalFor(90.5)).toEqual({ header: '91', said: 'Try again in 2 minutes' });
});
