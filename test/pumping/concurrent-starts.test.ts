/**
 * The SMS pumping check counts a start's text when it decides, in one atomic step with its reading,
 * on SQLite and PostgreSQL: a burst of concurrent starts, on one instance or two sharing the
 * counters, sends exactly what the same starts one after another send. A text counted and never
 * sent is given back: a start refused by the rules (only its refusal stays counted), by the start
 * budgets or by the app's beforeCreate hook, or met by a busy service, leaves the sent counts as
 * they were.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { KitError, KitErrorCode } from '../../middleware/index.ts';
import { startKeys } from '../../middleware/pumping/pumping-keys.ts';
import type { PumpingCount } from '../../middleware/store/types.ts';
import { describeEachAppStore, type StoreOptions } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { GENEROUS_START_LIMITS } from '../support/limits.ts';
import { addPhoneAction } from '../support/actions.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Each test runs on its own day, so no two share a window; ten minutes into an hour. */
const BASE = (Math.floor(Date.now() / HOUR) + 1) * HOUR + 10 * 60_000;
const dayOf = (n: number) => BASE + n * 2 * DAY;
const BURST = 30;
/** The number the app's beforeCreate hook refuses. */
const REFUSED_BY_HOOK = '+2348039999999';

const addPhone = addPhoneAction();

/** Refuse mode, the address rules out of the way (every agent is 127.0.0.1), one start per user. */
async function pumpingApp(storeOptions: Awaited<ReturnType<StoreOptions>>): Promise<TestApp> {
  return startTestApp({
    ...storeOptions,
    client: { retry: { maxAttempts: 2, baseDelayMs: 20, maxDelayMs: 50, budgetMs: 1000 } },
    kit: {
      actions: [addPhone],
      pumping: { mode: 'refuse', thresholds: { address: { dailyFloor: 1000, hourlyFloor: 1000 } } },
      limits: { ...GENEROUS_START_LIMITS, perUser: { points: 1, durationSeconds: 3600 } },
      beforeCreate: (_req, attempt) => {
        if (attempt.destination === REFUSED_BY_HOOK) {
          throw new KitError(KitErrorCode.RateLimited, 'Not this number.', { retryAfterSeconds: 60 });
        }
      },
    },
  });
}

/** Nigerian mobiles, each in a block of its own: only the country's rule is in play. */
const nigerian = (day: number, n: number) => `+234803${1_000_001 + day * 100_000 + n * 1000}`;

/** A start by a user of its own to `phone`: its status. */
async function startTo(app: TestApp, phone: string): Promise<number> {
  const user = await app.agent().signIn(`burst-${phone}-${Math.random()}`);
  return (await user.tryStartWithNumber('add_phone', phone)).status;
}

const texts = async (app: TestApp) => (await app.emulator.control.stats()).smsSent;

/** The counts of every key of a start to `phone` from 127.0.0.1 by `userRef`, at `now`. */
async function countsOf(app: TestApp, now: number, phone: string, userRef = 'nobody'): Promise<PumpingCount[]> {
  const start = startKeys(phone, '127.0.0.1', userRef);
  const reading = await app.store.pumping!.readPumping({
    keys: start.keys,
    address: start.address,
    hour: Math.floor(now / HOUR),
    now,
  });
  return reading.counts;
}

const nigeriaSent = async (app: TestApp, now: number) => (await countsOf(app, now, nigerian(0, 0)))[0]!.sentThisHour;

/** Starts one after another to fresh Nigerian numbers until the first refusal: how many were sent. */
async function sequentialTexts(app: TestApp, day: number): Promise<number> {
  const before = await texts(app);
  for (let n = 0; n < BURST; n++) if ((await startTo(app, nigerian(day, n))) === 429) break;
  return (await texts(app)) - before;
}

describeEachAppStore('SMS pumping rules under concurrent starts', (_store, storeOptions) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await pumpingApp(await storeOptions());
  });
  afterAll(async () => {
    await app?.close();
  });
  afterEach(async () => {
    await app.emulator.control.setRateLimits({ createsPerSecond: 0 });
  });

  it(`${BURST} concurrent starts to one country send exactly what the same starts one after another send, and the country counts them`, async () => {
    const sequential = await app.clock.pinned(dayOf(0), () => sequentialTexts(app, 0));
    expect(sequential).toBeGreaterThan(0);
    expect(sequential).toBeLessThan(BURST);
    await app.clock.pinned(dayOf(1), async () => {
      const before = await texts(app);
      const statuses = await Promise.all(Array.from({ length: BURST }, (_, n) => startTo(app, nigerian(1, n))));
      expect(statuses.filter((s) => s === 200).length).toBe(sequential);
      expect(statuses.filter((s) => s !== 200).every((s) => s === 429)).toBe(true);
      expect((await texts(app)) - before).toBe(sequential);
      expect(await nigeriaSent(app, dayOf(1))).toBe(sequential);
    });
  });

  it('a start the rules refuse leaves every count of its keys as before it, but its refusal, and spends no budget', async () => {
    await app.clock.pinned(dayOf(2), async () => {
      await sequentialTexts(app, 2);
      const phone = nigerian(2, BURST + 1);
      const userRef = 'refused-by-the-rules';
      const before = await countsOf(app, dayOf(2), phone, userRef);
      const user = await app.agent().signIn(userRef);
      expect((await user.tryStartWithNumber('add_phone', phone)).status).toBe(429);
      const after = await countsOf(app, dayOf(2), phone, userRef);
      // Only the country's rule refused it: the country counts the refusal, nothing else moved.
      const [country, ...rest] = before;
      expect(after).toEqual([{ ...country, refusedThisHour: country!.refusedThisHour + 1 }, ...rest]);
      // Its one start of the hour is still there to spend: the next start to a country with room goes.
      expect((await user.tryStartWithNumber('add_phone', '+33612345678')).status).toBe(200);
    });
  });

  it('a start the start budgets refuse gives its text back: the country counts only the text sent', async () => {
    await app.clock.pinned(dayOf(3), async () => {
      const user = await app.agent().signIn('one-start-an-hour');
      expect((await user.tryStartWithNumber('add_phone', nigerian(3, 0))).status).toBe(200);
      expect((await user.tryStartWithNumber('add_phone', nigerian(3, 1))).status).toBe(429);
      expect(await nigeriaSent(app, dayOf(3))).toBe(1);
    });
  });

  it("a start the app's beforeCreate hook refuses gives its text back: the country counts nothing", async () => {
    await app.clock.pinned(dayOf(4), async () => {
      const before = await texts(app);
      expect(await startTo(app, REFUSED_BY_HOOK)).toBe(429);
      expect(await texts(app)).toBe(before);
      expect(await nigeriaSent(app, dayOf(4))).toBe(0);
    });
  });

  it('a start the service answers busy (429 on every try) gives its text back: the country counts only the text sent', async () => {
    await app.clock.pinned(dayOf(5), async () => {
      // The service's one create of the next 100 s goes to the first start: the second meets 429.
      await app.emulator.control.setRateLimits({ createsPerSecond: 0.01 });
      expect(await startTo(app, nigerian(5, 0))).toBe(200);
      expect(await startTo(app, nigerian(5, 1))).toBe(503);
      expect(await nigeriaSent(app, dayOf(5))).toBe(1);
    });
  });
});

describeEachAppStore('SMS pumping rules under concurrent starts on two instances', (store, storeOptions) => {
  let first: TestApp;
  let second: TestApp;
  let dir: string | undefined;
  beforeAll(async () => {
    let database = await storeOptions();
    if (store === 'sqlite') {
      dir = mkdtempSync(join(tmpdir(), 'pumping-burst-'));
      database = { database: { path: join(dir, 'shared.db') } };
    }
    first = await pumpingApp(database);
    second = await pumpingApp(database);
  });
  afterAll(async () => {
    await first?.close();
    await second?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it(`${BURST} concurrent starts to one country over two instances send exactly what the same starts one after another send`, async () => {
    const sequential = await first.clock.pinned(dayOf(0), () => sequentialTexts(first, 0));
    expect(sequential).toBeGreaterThan(0);
    await first.clock.pinned(dayOf(1), () =>
      second.clock.pinned(dayOf(1), async () => {
        const before = (await texts(first)) + (await texts(second));
        const statuses = await Promise.all(
          Array.from({ length: BURST }, (_, n) => startTo(n % 2 === 0 ? first : second, nigerian(1, n))),
        );
        expect(statuses.filter((s) => s === 200).length).toBe(sequential);
        expect((await texts(first)) + (await texts(second)) - before).toBe(sequential);
        expect(await nigeriaSent(second, dayOf(1))).toBe(sequential);
      }),
    );
  });
});
