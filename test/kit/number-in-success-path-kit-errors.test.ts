/**
 * A KitError a `successPath` function throws is in the integrator's words and may name the user's
 * number ("no page for +15550001111"): the landing's log line has it masked, as any other error of
 * the integrator's code. The user still lands on the neutral page, with no redirect.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { KitError, KitErrorCode, type ActionDefinition } from '../../middleware/index.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { newSeen } from '../support/seen.ts';
import { USERS } from '../support/users.ts';

const alice = USERS.alice!;

const action: ActionDefinition<unknown> = {
  name: 'open_profile',
  operationSensitivity: 'normal',
  successPath: () => {
    throw new KitError(KitErrorCode.HookFailed, `no page for ${alice.destination}`);
  },
  fulfil: () => undefined,
};

let app: TestApp;
const seen = newSeen();
beforeAll(async () => {
  app = await startTestApp({ kit: { actions: [action] } });
});
afterAll(async () => {
  await app?.close();
});

it("a successPath's KitError naming the number: logged masked, the user lands on the neutral page", async () => {
  const user = await app.agent(seen).signIn('alice');
  const handoff = await user.start('open_profile');
  const { sessionId } = await app.latestAttempt();
  const location = await user.verifyOnHostedPage({ ...handoff, sessionId });
  const landed = await user.request(location);
  expect(landed.status).toBe(200);
  expect(landed.headers.get('location')).toBeNull();
  expect(await landed.text()).not.toContain('no page for');

  const failed = app.logs
    .map((line) => JSON.parse(line) as { sessionId?: string; msg?: string; err?: { message?: string } })
    .filter((line) => line.sessionId === sessionId && line.msg?.includes('successPath failed') === true);
  expect(failed.map((line) => line.err?.message)).toEqual(['no page for ••\u00a011']);
  for (const line of app.logs) expect(line).not.toContain(alice.destination.slice(2));
});
