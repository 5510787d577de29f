/**
 * The hold on a key an attack keeps pressing on is reached under a burst as it is one start after
 * another, on SQLite and PostgreSQL: with a challenge every start passes (an attacker buying
 * solves), the starts the country's rules would refuse are each offered the challenge, and once
 * those press on the country at three times its hourly threshold it is held and refuses them
 * without the challenge. Concurrent starts, each waiting on its challenge a while, send no more
 * texts than the same starts one after another: each is judged on the challenged starts before it,
 * not only on those whose challenge was already recorded.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import type { Agent } from '../support/agent.ts';
import { GENEROUS_START_LIMITS } from '../support/limits.ts';
import { addPhoneAction } from '../support/actions.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Each test runs on its own day, so no two share a window; ten minutes into an hour. */
const BASE = (Math.floor(Date.now() / HOUR) + 1) * HOUR + 10 * 60_000;
const dayOf = (n: number) => BASE + n * 2 * DAY;
const BURST = 40;
/** How long the app's challenge takes to answer (its provider's round trip), in real time. */
const CHALLENGE_MS = 100;
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A GB mobile in a block of its own (the number without its last three digits), per day. */
const british = (day: number, n: number) => `+447400${day}${String(n).padStart(2, '0')}001`;

describeEachAppStore('challenged starts pressing on a country', (_store, storeOptions) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: {
        actions: [addPhoneAction()],
        pumping: {
          mode: 'refuse',
          // Every agent is 127.0.0.1: the address rules out of the way. The country's hourly
          // threshold is the default max(3, 20 / 6); it is held at three times that.
          thresholds: { address: { dailyFloor: 100_000, hourlyFloor: 100_000 } },
          // The attacker's solving service: every challenge passes, after its round trip.
          challenge: { verify: () => delay(CHALLENGE_MS).then(() => true) },
        },
        limits: GENEROUS_START_LIMITS,
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  const texts = async () => (await app.emulator.control.stats()).smsSent;
  /** A user of their own for each of the burst's starts, signed in first. */
  const users = () =>
    Promise.all(Array.from({ length: BURST }, (_, n) => app.agent().signIn(`challenged-${n}-${Math.random()}`)));
  const startTo = async (user: Agent, phone: string) =>
    (await user.tryStartWithNumber('add_phone', phone, { captcha: 'solved' })).status;

  it(`${BURST} concurrent challenged starts to one country send no more texts than the same starts one after another`, async () => {
    const sequential = await app.clock.pinned(dayOf(0), async () => {
      const signedIn = await users();
      const before = await texts();
      for (const [n, user] of signedIn.entries()) await startTo(user, british(0, n));
      return (await texts()) - before;
    });
    // The challenge let starts past the country's hourly rule, and the hold stopped them.
    expect(sequential).toBeGreaterThan(4);
    expect(sequential).toBeLessThan(BURST);
    const { concurrent, statuses } = await app.clock.pinned(dayOf(1), async () => {
      const signedIn = await users();
      const before = await texts();
      const answered = await Promise.all(signedIn.map((user, n) => startTo(user, british(1, n))));
      return { concurrent: (await texts()) - before, statuses: answered };
    });
    expect(statuses.filter((s) => s !== 200).every((s) => s === 429)).toBe(true);
    expect(
      concurrent,
      `texts sent by ${BURST} challenged starts: ${concurrent} at once, ${sequential} one after another`,
    ).toBeLessThanOrEqual(sequential);
  });
});
