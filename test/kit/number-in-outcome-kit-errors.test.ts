/**
 * A KitError `onOutcome` throws is in the integrator's words and may name the user's number (read
 * from its own records: "no mailbox for +15550001111"): the delivery's log line has it masked, as
 * any other error of the integrator's code, after the response and at the sweep's delivery, on
 * SQLite and PostgreSQL. The user is still sent to the action's page.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { contextOf } from '../../middleware/create-kit.ts';
import { KitError, KitErrorCode, type ActionDefinition } from '../../middleware/index.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { newSeen } from '../support/seen.ts';
import { USERS } from '../support/users.ts';
import { waitFor } from '../support/wait-for.ts';

const alice = USERS.alice!;

const action: ActionDefinition<unknown> = {
  name: 'link_mailbox',
  operationSensitivity: 'normal',
  successPath: '/done/mailbox',
  fulfil: () => undefined,
};

describeEachAppStore("an onOutcome KitError naming the user's number", (_store, storeOptions) => {
  let app: TestApp;
  const seen = newSeen();
  let calls = 0;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: {
        actions: [action],
        onOutcome: () => {
          calls++;
          throw new KitError(KitErrorCode.HookFailed, `no mailbox for ${alice.destination}`);
        },
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  /** The messages of the lines saying a delivery failed. */
  const failedDeliveries = () =>
    app.logs
      .map((line) => JSON.parse(line) as { msg?: string; err?: { message?: string } })
      .filter((line) => line.msg === 'onOutcome failed; the event is delivered again later')
      .map((line) => line.err?.message);

  it('is logged masked after the response and by the sweep; the user is sent on as before', async () => {
    const user = await app.agent(seen).signIn('alice');
    await user.start('link_mailbox');
    const row = await app.latestAttempt();
    await app.emulator.control.complete(row.sessionId, { outcome: 'verified' });

    const landed = await user.landFor(row.sessionId, row.state);
    expect(landed.status).toBe(303);
    expect(landed.headers.get('location')).toBe('/done/mailbox');
    await waitFor(() => failedDeliveries().length === 1, 2000, 'the failed delivery after the response');
    expect(failedDeliveries()).toEqual(['no mailbox for ••\u00a011']);

    await runSweep({ ...contextOf(app.kit), now: () => Date.now() + 10 * 60_000 }, { owner: 'masked' });
    expect(calls).toBe(2);
    expect(failedDeliveries()).toEqual(['no mailbox for ••\u00a011', 'no mailbox for ••\u00a011']);
    for (const line of app.logs) expect(line).not.toContain(alice.destination.slice(2));
  });
});
