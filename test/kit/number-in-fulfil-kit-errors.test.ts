/**
 * A KitError an action's `fulfil` throws is in the integrator's words and may name the user's
 * number ("no payout account for +15550001111"): the landing's and the sweep's log lines have it
 * masked, as any other error of the integrator's code, on SQLite and PostgreSQL. The user's answer
 * is the kit's page for its code, as before.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { contextOf } from '../../middleware/create-kit.ts';
import { KitError, KitErrorCode, type ActionDefinition } from '../../middleware/index.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { effectCounts, startTestApp, type TestApp } from '../support/app.ts';
import { newSeen } from '../support/seen.ts';
import { USERS } from '../support/users.ts';

const alice = USERS.alice!;

const action: ActionDefinition<unknown> = {
  name: 'link_payout',
  operationSensitivity: 'normal',
  successPath: '/done/payout',
  fulfil: (_tx, attempt) => {
    throw new KitError(KitErrorCode.FulfilFailed, `no payout account for ${String(attempt.destination)}`);
  },
};

describeEachAppStore("a fulfil's KitError naming the user's number", (_store, storeOptions) => {
  let app: TestApp;
  const seen = newSeen();
  beforeAll(async () => {
    app = await startTestApp({ ...(await storeOptions()), kit: { actions: [action] } });
  });
  afterAll(async () => {
    await app?.close();
  });

  /** The landing's and the sweep's lines about the session carrying the error's message. */
  const messages = (sessionId: string) =>
    app.logs
      .map((line) => JSON.parse(line) as { route?: string; msg?: string; err?: { message?: string } })
      .filter((line) => line.route === 'landing' || JSON.stringify(line).includes(sessionId))
      .map((line) => line.err?.message ?? line.msg)
      .filter((message) => message?.startsWith('no payout account') === true);

  it("is logged masked by the landing and by the sweep; the user sees the kit's page, nothing is marked", async () => {
    const user = await app.agent(seen).signIn('alice');
    await user.start('link_payout');
    const row = await app.latestAttempt();
    await app.emulator.control.complete(row.sessionId, { outcome: 'verified' });

    const landed = await user.landFor(row.sessionId, row.state);
    expect(landed.status).toBe(500);
    const page = await landed.text();
    expect(page).not.toContain('no payout account');
    expect(page).not.toContain(alice.destination);
    expect(messages(row.sessionId)).toEqual(['no payout account for ••\u00a011']);

    const report = await runSweep({ ...contextOf(app.kit), now: () => Date.now() + 10 * 60_000 }, { owner: 'masked' });
    expect(report.errors).toBe(1);
    expect(messages(row.sessionId)).toEqual(['no payout account for ••\u00a011', 'no payout account for ••\u00a011']);
    expect(await app.attempt(row.sessionId)).toMatchObject({ outcome: 'pending' });
    expect((await effectCounts(app)).get(row.sessionId)).toBeUndefined();
    for (const line of app.logs) expect(line).not.toContain(alice.destination.slice(2));
  });
});
