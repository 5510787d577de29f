/**
 * A start the app's `beforeCreate` hook refuses creates no session and sends nothing, on SQLite and
 * PostgreSQL. The number's budget is given back, so refused starts aimed at someone's number
 * cannot lock its owner out; the requester's own budgets stay spent, so the app's refusals (a
 * number that already has an account) cannot be probed without limit.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { KitError, KitErrorCode } from '../../middleware/index.ts';
import { addPhoneAction } from '../support/actions.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { GENEROUS_START_LIMITS } from '../support/limits.ts';

const VICTIM_NUMBER = '+33612345678';

describeEachAppStore('a start beforeCreate refuses', (_store, storeOptions) => {
  let app: TestApp;
  let refuse = false;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: {
        actions: [addPhoneAction()],
        // One start a number an hour, three a user: a refused start that kept the number's would
        // leave it none; one that gave the user's back would leave the requester unlimited.
        limits: {
          ...GENEROUS_START_LIMITS,
          perDestination: { points: 1, durationSeconds: 3600 },
          perUser: { points: 3, durationSeconds: 3600 },
        },
        beforeCreate: () => {
          if (refuse) throw new KitError(KitErrorCode.RateLimited, 'Not now.', { retryAfterSeconds: 5 });
        },
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it("gives the number's budget back: after three refused starts to it, its owner's start is texted", async () => {
    const mallory = await app.agent().signIn('mallory');
    refuse = true;
    for (let i = 0; i < 3; i++) expect((await mallory.tryStartWithNumber('add_phone', VICTIM_NUMBER)).status).toBe(429);
    refuse = false;
    const sent = (await app.emulator.control.stats()).smsSent;
    const bob = await app.agent().signIn('bob');
    expect((await bob.tryStartWithNumber('add_phone', VICTIM_NUMBER)).status).toBe(200);
    expect((await app.emulator.control.stats()).smsSent).toBe(sent + 1);
    // The one start of the hour was spent by the start that ran: the number's budget still holds.
    expect(
      (
        await app
          .agent()
          .signIn('carol')
          .then((c) => c.tryStartWithNumber('add_phone', VICTIM_NUMBER))
      ).status,
    ).toBe(429);
  });

  it("keeps the requester's budgets spent: three refused starts use up the user's three of the hour", async () => {
    const dave = await app.agent().signIn('dave');
    refuse = true;
    for (let i = 0; i < 3; i++)
      expect((await dave.tryStartWithNumber('add_phone', `+3361234560${i}`)).status).toBe(429);
    refuse = false;
    const sent = (await app.emulator.control.stats()).smsSent;
    // The app no longer refuses: this 429 is the kit's, and nothing is texted.
    expect((await dave.tryStartWithNumber('add_phone', '+33612345609')).status).toBe(429);
    expect((await app.emulator.control.stats()).smsSent).toBe(sent);
  });
});
