/**
 * Starts the SMS pumping rules refuse leave no trace on the keys that did not refuse them, on
 * SQLite and PostgreSQL, whether they come one after another or all at once: a client address whose
 * own rule is tripped (texts to four countries, none verified) sends a burst of starts to new GB
 * numbers, each in a block of its own, and fails the app's challenge (a provider's check of 50 ms)
 * on every one. Every start is refused and nothing is sent; the recorded decisions name the
 * address's rules only, never the country's; and the country stays open, so a new user from
 * another address gets their text. A refused start counts no text (it is judged and counted in
 * one step of the store), so the others never read it as an unverified text of the country, and
 * their refusals are not counted under the country and do not hold it.
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
const BURST = 30;
/** How long the app's challenge takes to answer (its provider's round trip), in real time. */
const CHALLENGE_MS = 50;
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** One mobile each in four countries other than GB: the fifth country texted from the address trips it. */
const ELSEWHERE = ['+2348031000001', '+254711000001', '+33612345678', '+919812345002'];

/** A GB mobile in a block of its own (the number without its last three digits), per day. */
const british = (day: number, n: number) => `+447400${day}${String(n).padStart(2, '0')}001`;

describeEachAppStore('starts refused by an address rule', (_store, storeOptions) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      // The client's address comes from X-Forwarded-For, as behind a proxy the app trusts.
      ownRoutes: (host) => host.set('trust proxy', 'loopback'),
      kit: {
        actions: [addPhoneAction()],
        // The kit's default thresholds: a country's hourly one is max(3, 20 / 6). The app's challenge
        // asks its provider (50 ms) and the burst never passes it.
        pumping: { mode: 'refuse', challenge: { verify: () => delay(CHALLENGE_MS).then(() => false) } },
        limits: GENEROUS_START_LIMITS,
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  const texts = async () => (await app.emulator.control.stats()).smsSent;
  const signedIn = (name: string) => app.agent().signIn(`${name}-${Math.random()}`);
  /** A start by `user` to `phone` from the client address `ip`: its status. */
  const startFrom = async (user: Agent, ip: string, phone: string) =>
    (await user.postStart({ _csrf: user.csrf, action: 'add_phone', phone }, { 'x-forwarded-for': ip })).status;

  /** Texts from `ip` to four countries, none verified: its address countries rule is tripped. */
  async function tripAddress(ip: string) {
    const before = await texts();
    for (const phone of ELSEWHERE) expect(await startFrom(await signedIn('tripper'), ip, phone)).toBe(200);
    expect((await texts()) - before).toBe(ELSEWHERE.length);
    expect(await startFrom(await signedIn('tripper'), ip, british(9, 99))).toBe(429);
  }

  /** After the burst from `ip` on day `day`: what was sent, a new user's start, and what the decisions name. */
  async function checkAfterBurst(day: number, ip: string, statuses: number[], sentBefore: number) {
    // (a) Every start of the burst is refused: not one text is sent.
    expect(statuses, 'every start of the burst is refused').toEqual(Array(BURST).fill(429));
    expect((await texts()) - sentBefore, 'texts sent for the burst').toBe(0);
    // (b) A new user from another address, to a number of a block of its own: the country is open.
    const newcomer = `198.51.100.${day + 1}`;
    const before = await texts();
    const status = await startFrom(await signedIn('newcomer'), newcomer, british(day, BURST + 1));
    const decisions = await app.store.pumping!.listDecisions({ since: dayOf(day), limit: 100 });
    const refusedFor = decisions.find((d) => d.address === newcomer)?.reasons.join(', ') ?? 'none';
    expect.soft(status, `a new user from another address to a GB number (refused for: ${refusedFor})`).toBe(200);
    expect.soft((await texts()) - before, 'texts sent for the new user').toBe(1);
    // (c) The burst's decisions name the address's rules alone.
    const burst = decisions.filter((d) => d.country === 'GB' && d.address === ip);
    expect(burst.length).toBe(BURST + 1);
    const reasons = [...new Set(burst.flatMap((d) => d.reasons))].sort();
    const notAddress = reasons.filter((reason) => !reason.startsWith('address_'));
    expect.soft(notAddress, `reasons the burst was refused for: ${reasons.join(', ')}`).toEqual([]);
  }

  it(`${BURST} starts from a tripped address to GB numbers, one after another: all refused, the country stays open`, async () => {
    const ip = '203.0.113.10';
    await app.clock.pinned(dayOf(0), async () => {
      await tripAddress(ip);
      const users = await Promise.all(Array.from({ length: BURST }, () => signedIn('burst')));
      const before = await texts();
      const statuses: number[] = [];
      for (const [n, user] of users.entries()) statuses.push(await startFrom(user, ip, british(0, n)));
      await checkAfterBurst(0, ip, statuses, before);
    });
  });

  it(`${BURST} concurrent starts from a tripped address to GB numbers: all refused, the country stays open`, async () => {
    const ip = '203.0.113.20';
    await app.clock.pinned(dayOf(1), async () => {
      await tripAddress(ip);
      // Signed in first: the starts leave together.
      const users = await Promise.all(Array.from({ length: BURST }, () => signedIn('burst')));
      const before = await texts();
      const statuses = await Promise.all(users.map((user, n) => startFrom(user, ip, british(1, n))));
      await checkAfterBurst(1, ip, statuses, before);
    });
  });
});
