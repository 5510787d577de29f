/**
 * A start the app's `beforeCreate` hook refuses creates no session and sends nothing, so it spends
 * no start budget either, on SQLite and PostgreSQL: budgets count texts that may have been sent,
 * and a refused start counted would let refusals lock a user (or a number) out.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { KitError, KitErrorCode } from '../../middleware/index.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { GENEROUS_START_LIMITS } from '../support/limits.ts';

describeEachAppStore('a start beforeCreate refuses', (_store, storeOptions) => {
  let app: TestApp;
  let refuse = false;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: {
        // One start per user an hour: a refused start that spent it would leave none.
        limits: { ...GENEROUS_START_LIMITS, perUser: { points: 1, durationSeconds: 3600 } },
        beforeCreate: () => {
          if (refuse) throw new KitError(KitErrorCode.RateLimited, 'Not now.', { retryAfterSeconds: 5 });
        },
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('spends no start budget: after three refused starts the user’s one start of the hour is still there', async () => {
    const alice = await app.agent().signIn('alice');
    refuse = true;
    for (let i = 0; i < 3; i++) expect((await alice.tryStart('grant_badge')).status).toBe(429);
    refuse = false;
    const sent = (await app.emulator.control.stats()).smsSent;
    expect((await alice.tryStart('grant_badge')).status).toBe(200);
    // The one start was spent by the start that ran: the budget still holds.
    expect((await alice.tryStart('grant_badge')).status).toBe(429);
    expect((await app.emulator.control.stats()).smsSent).toBe(sent + 1);
  });
});
