/**
 * A KitError the integrator's page renderer or locale chooser throws is in its own words and may
 * name a number ("no template for +15550001111"): the kit's log line has it masked, as any other
 * error of the integrator's code. The user still gets the built-in page.
 */
import { afterEach, expect, it } from 'vitest';
import { KitError, KitErrorCode } from '../../middleware/index.ts';
import { englishMessages } from '../../middleware/pages/messages.ts';
import type { VerificationKitOptions } from '../../middleware/options/options.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { newSeen } from '../support/seen.ts';

const NUMBER = '+15550001111';
const seen = newSeen();

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const throwing = (): never => {
  throw new KitError(KitErrorCode.HookFailed, `no template for ${NUMBER}`);
};

it.each<[string, Partial<VerificationKitOptions<unknown>>]>([
  ['locale', { locale: throwing }],
  ['pages.error', { pages: { error: throwing } }],
])('%s throwing a KitError naming a number: the built-in page, logged with the number masked', async (_name, kit) => {
  app = await startTestApp({ kit });
  const answer = await app.agent(seen).land('session_id=x&state=bad');
  expect(answer.status).toBe(400);
  expect(answer.body).toContain(englishMessages.error.heading);
  expect(answer.body).not.toContain('no template');

  const messages = app.logs
    .map((line) => JSON.parse(line) as { err?: { message?: string } })
    .map((line) => line.err?.message)
    .filter((message) => message?.startsWith('no template') === true);
  expect(messages).toEqual(['no template for ••\u00a011']);
  for (const line of app.logs) expect(line).not.toContain(NUMBER.slice(2));
});
