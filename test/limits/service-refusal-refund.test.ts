/**
 * A start the service definitely refuses (a 4xx: no session, no text) is given back as a busy one
 * is: its user, number and address budgets are spendable again, and the SMS pumping rules count no
 * text for it, so neither a refused user nor a country's real users are held back by texts never
 * sent. The user's answer stays the refusal's. A create that may have made its session (a 5xx
 * through its retries, a timeout, a retry that then succeeded) stays counted. A stored number
 * spelt with a full-width plus is texted as the E.164 the kit judged, not refused by the service
 * after its budgets were spent. On SQLite and PostgreSQL.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ActionDefinition } from '../../middleware/index.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { addPhoneAction } from '../support/actions.ts';
import { waitFor } from '../support/wait-for.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/**
 * Each test runs on days of its own, so no two share a budget's or a count's window; in the past,
 * since PostgreSQL counts the budgets by its own clock whenever the kit's is ahead of it.
 */
const BASE = (Math.floor(Date.now() / HOUR) - 40 * 24) * HOUR + 10 * 60_000;
const dayOf = (n: number) => BASE + n * 2 * DAY;

const ONE_START = { points: 1, durationSeconds: 3600 };

const phoneOnFile: ActionDefinition<unknown> = {
  name: 'phone_on_file',
  operationSensitivity: 'normal',
  successPath: '/done/phone',
  fulfil: () => {},
};

describeEachAppStore('a start the service refuses', (_store, storeOptions) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      // A create still in flight at the service is waited out within budgetMs: 1 s, under the 1.5 s
      // the timed-out create below is held.
      client: {
        retry: { maxAttempts: 2, baseDelayMs: 20, maxDelayMs: 50, budgetMs: 1000 },
        timeouts: { headersMs: 400 },
      },
      kit: {
        actions: [addPhoneAction(), phoneOnFile],
        // Each user is named after the number the app keeps for them.
        resolveUser: (req) => {
          const name = (req.session as { user?: string }).user;
          return name === undefined ? null : { userRef: `user-${name}`, destination: name };
        },
        // Numbers of no country pass the kit's policy: the service is the one that refuses them.
        destinationPolicy: { allowCountries: ['FR', 'ZZ'] },
        // One start per user, per number and per address: a start not given back holds the next one.
        limits: {
          perUser: ONE_START,
          perDestination: ONE_START,
          perIp: ONE_START,
          perUserNumbers: { points: 100, durationSeconds: 3600 },
        },
        pumping: { mode: 'refuse', thresholds: { address: { dailyFloor: 1000, hourlyFloor: 1000 } } },
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  /** Texts the pumping rules count today for `country`. */
  const counted = async (country: string) =>
    (await app.kit.pumping.countsByDay({ by: 'country', days: 1 }))
      .filter((c) => c.key === country)
      .reduce((sum, c) => sum + c.sent, 0);
  const texts = async () => (await app.emulator.control.stats()).smsSent;

  // Days only move forward: a budget's window is kept by its key alone.
  for (const [index, status] of [400, 403, 404, 409, 422].entries()) {
    it(`a ${status} refusal: answered as before (502), nothing counted, and the same user, number and address start again`, async () => {
      await app.clock.pinned(dayOf(index), async () => {
        const user = await app.agent().signIn(`refused-${status}`);
        const sent = await texts();
        await app.emulator.control.injectFaults({ createFailures: 1, createStatus: status });
        const refused = await user.tryStartWithNumber('add_phone', '+33612340001');
        expect(refused.status).toBe(502);
        expect(await texts()).toBe(sent);
        expect(await counted('FR')).toBe(0);
        expect((await user.tryStartWithNumber('add_phone', '+33612340001')).status).toBe(200);
        expect(await counted('FR')).toBe(1);
        expect(await texts()).toBe(sent + 1);
      });
    });
  }

  it('a number the policy passes and the service calls unusable (destination_required) spends nothing, however often', async () => {
    await app.clock.pinned(dayOf(5), async () => {
      const user = await app.agent().signIn('+012345678');
      const sent = await texts();
      for (let i = 0; i < 3; i++) expect((await user.tryStart('phone_on_file')).status).toBe(502);
      expect(app.logs.filter((line) => line.includes('destination_required')).length).toBeGreaterThanOrEqual(3);
      expect(await texts()).toBe(sent);
      expect(await counted('ZZ')).toBe(0);
    });
  });

  it('a 5xx through every retry may have sent the text: the start stays counted and its budgets spent', async () => {
    await app.clock.pinned(dayOf(6), async () => {
      const user = await app.agent().signIn('unavailable');
      await app.emulator.control.injectFaults({ createFailures: 2, createStatus: 503 });
      expect((await user.tryStartWithNumber('add_phone', '+33612340002')).status).toBe(503);
      expect(await counted('FR')).toBe(1);
      expect((await user.tryStartWithNumber('add_phone', '+33612340002')).status).toBe(429);
    });
  });

  it('a create that timed out, its retries meeting it still in flight through the budget, stays counted: the service sent its text', async () => {
    await app.clock.pinned(dayOf(7), async () => {
      const user = await app.agent().signIn('timed-out');
      const sent = await texts();
      await app.emulator.control.injectFaults({ createDelayMs: 1500 });
      try {
        expect((await user.tryStartWithNumber('add_phone', '+33612340003')).status).toBe(503);
        await waitFor(async () => (await texts()) === sent + 1, 5000, 'the delayed create to send its text');
      } finally {
        await app.emulator.control.injectFaults({ createDelayMs: 0 });
      }
      expect(await counted('FR')).toBe(1);
      expect((await user.tryStartWithNumber('add_phone', '+33612340003')).status).toBe(429);
    });
  });

  it('a create retried with its key after a 5xx that then succeeds is counted once and not given back', async () => {
    await app.clock.pinned(dayOf(8), async () => {
      const user = await app.agent().signIn('retried');
      await app.emulator.control.injectFaults({ createFailures: 1, createStatus: 503 });
      expect((await user.tryStartWithNumber('add_phone', '+33612340004')).status).toBe(200);
      expect(await counted('FR')).toBe(1);
      expect((await user.tryStartWithNumber('add_phone', '+33612340004')).status).toBe(429);
      expect(await counted('FR')).toBe(1);
    });
  });

  it('a stored number spelt with a full-width plus is texted as the E.164 judged, and counted under its country', async () => {
    await app.clock.pinned(dayOf(9), async () => {
      const user = await app.agent().signIn('＋33612340005');
      expect((await user.tryStart('phone_on_file')).status).toBe(200);
      expect((await app.emulator.control.outbox()).at(-1)?.to).toBe('+33612340005');
      expect(await counted('FR')).toBe(1);
    });
  });

  it('a number the service calls unusable, answered 200 with isSuccess false (its status is not stated), spends nothing either', async () => {
    await app.clock.pinned(dayOf(10), async () => {
      const user = await app.agent().signIn('+012345679');
      const sent = await texts();
      await app.emulator.control.injectFaults({ validationStatus: 200 });
      try {
        for (let i = 0; i < 3; i++) expect((await user.tryStart('phone_on_file')).status).toBe(502);
      } finally {
        await app.emulator.control.injectFaults({ validationStatus: 400 });
      }
      expect(await texts()).toBe(sent);
      expect(await counted('ZZ')).toBe(0);
    });
  });
});

/**
 * Start limits of the app's own may resolve with something that is no receipt (a rate limiter's
 * own result, `{ remainingPoints }`): nothing to give back, and the refusal is answered as the
 * service's refusal, never as the kit's own failure reading `refund` of it.
 */
describeEachAppStore(
  'a start the service refuses, counted by limits of the app that give no receipt',
  (_store, storeOptions) => {
    let app: TestApp;
    let consumed = 0;
    beforeAll(async () => {
      app = await startTestApp({
        ...(await storeOptions()),
        kit: {
          actions: [addPhoneAction()],
          limits: {
            consume: async () => {
              consumed += 1;
              return { remainingPoints: 4, msBeforeNext: 1000 } as never;
            },
          },
        },
      });
    });
    afterAll(async () => {
      await app?.close();
    });

    it('a 400 refusal is answered 502 as the refusal, with no TypeError logged', async () => {
      const user = await app.agent().signIn('refused-no-receipt');
      await app.emulator.control.injectFaults({ createFailures: 1, createStatus: 400 });
      const refused = await user.tryStartWithNumber('add_phone', '+33612340011');
      expect(consumed).toBe(1);
      expect(refused.status).toBe(502);
      expect(app.logs.filter((line) => line.includes('TypeError'))).toEqual([]);
    });
  },
);
