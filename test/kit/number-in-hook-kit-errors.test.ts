/**
 * A KitError the integrator's hooks throw is in its own words, and may name the user's number
 * ("we cannot text +15550001111 today"): its users see it as written, and the kit's log line has
 * the number masked, as any other error of the integrator's code. The kit's own messages stay as
 * written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KitError, KitErrorCode, type ActionDefinition } from '../../middleware/index.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { newSeen } from '../support/seen.ts';
import { USERS } from '../support/users.ts';

const alice = USERS.alice!;
const TYPED = '+447400123456';

const actions: ActionDefinition<unknown>[] = [
  {
    name: 'refused_by_before_create',
    operationSensitivity: 'normal',
    successPath: '/done',
    fulfil: () => undefined,
  },
  {
    name: 'refused_by_prepare',
    operationSensitivity: 'normal',
    successPath: '/done',
    destination: 'entered',
    proves: 'destination',
    // A 5xx of the integrator's own: not shown to users, logged.
    prepare: (_req, { user }) => {
      throw new KitError(KitErrorCode.HookFailed, `no carrier record for ${user.destination}`);
    },
    fulfil: () => undefined,
  },
];

let app: TestApp;
const seen = newSeen();
beforeAll(async () => {
  app = await startTestApp({
    kit: {
      actions,
      beforeCreate: (_req, who) => {
        if (who.action !== 'refused_by_before_create') return;
        throw new KitError(KitErrorCode.InvalidActionParams, `We cannot text ${who.destination} today.`);
      },
    },
  });
});
afterAll(async () => {
  await app?.close();
});

/** The log lines of the start route that carry an error code. */
function startErrorLines(): { code?: string; msg?: string }[] {
  return app.logs
    .map((line) => JSON.parse(line) as { route?: string; code?: string; msg?: string })
    .filter((line) => line.route === 'start' && line.code !== undefined);
}

describe("a KitError of the integrator's hooks naming a phone number", () => {
  it("beforeCreate's refusal: shown to the user as written, logged with the number masked", async () => {
    const user = await app.agent(seen).signIn('alice');
    const before = (await app.emulator.control.stats()).creates;
    const answer = await user.tryStart('refused_by_before_create');
    expect(answer.status).toBe(400);
    expect(await answer.text()).toContain(`We cannot text ${alice.destination} today.`);
    expect((await app.emulator.control.stats()).creates).toBe(before);

    const lines = startErrorLines().filter((line) => line.code === 'invalid_action_params');
    expect(lines.map((line) => line.msg)).toEqual(['We cannot text ••\u00a011 today.']);
    for (const line of app.logs) expect(line).not.toContain(alice.destination.slice(2));
  });

  it("prepare's 5xx naming the typed number: logged with it masked", async () => {
    const user = await app.agent(seen).signIn('alice');
    const answer = await user.tryStartWithNumber('refused_by_prepare', '+44 7400 123456');
    expect(answer.status).toBe(500);
    expect(await answer.text()).not.toContain(TYPED);

    const lines = startErrorLines().filter((line) => line.code === 'hook_failed');
    expect(lines.map((line) => line.msg)).toEqual(['no carrier record for ••\u00a056']);
    for (const line of app.logs) expect(line).not.toContain(TYPED.slice(3));
  });

  it("the kit's own refusal is logged as written", async () => {
    const user = await app.agent(seen).signIn('alice');
    expect((await user.tryStartWithNumber('refused_by_prepare', '12')).status).toBe(422);
    const lines = startErrorLines().filter((line) => line.code === 'invalid_phone_number');
    expect(lines.map((line) => line.msg)).toEqual([
      "The start request's `phone` is missing or is not a phone number that can be texted.",
    ]);
  });
});
