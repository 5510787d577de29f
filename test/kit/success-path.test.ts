/**
 * The outcome reaches the success page: an action's successPath may be a function of the landed
 * attempt, told the session and whether this landing ran the action or replayed it. Its result
 * passes the same same-origin path check as a fixed successPath: anything else (or a throw) is
 * logged and the user sees the neutral "complete" page, never a redirect. And whatever the
 * successPath, the page it names reads the landed attempt once: kit.attempts.takeLanded(req).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActionDefinition, LandedAttempt } from '../../middleware/index.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import type { Agent } from '../support/agent.ts';
import { newSeen } from '../support/seen.ts';
import { USERS } from '../support/users.ts';
import { watchUnhandledRejections } from '../support/unhandled.ts';

let app: TestApp;
const seen = newSeen();
const unhandled = watchUnhandledRejections();
const told: LandedAttempt[] = [];
const ran: string[] = [];

function action(name: string, successPath: ActionDefinition['successPath']): ActionDefinition<unknown> {
  return {
    name,
    operationSensitivity: 'normal',
    successPath,
    fulfil: (_tx, attempt) => {
      ran.push(attempt.sessionId);
    },
  };
}

beforeAll(async () => {
  app = await startTestApp({
    kit: {
      actions: [
        action('to_outcome', (landed) => {
          told.push(landed);
          return `/done/phone?session=${encodeURIComponent(landed.sessionId)}&fulfilment=${landed.fulfilment}`;
        }),
        action('to_other_site', () => '//evil.example/phished'),
        action('to_absolute', () => 'https://evil.example/'),
        // A common slip: the app's own page as an absolute URL, built from the user's number.
        action('to_number_url', () => `https://app.example/phones/${USERS.alice!.destination}/verified`),
        action('throws', () => {
          throw new Error('lookup failed');
        }),
        // An async function (a JavaScript app, or a cast): its rejection must reach no one.
        action('rejects', (() => Promise.reject(new Error('lookup failed later'))) as unknown as () => string),
      ],
    },
  });
});
afterAll(async () => {
  await app?.close();
});

async function land(user: Agent, name: string) {
  const handoff = await user.start(name);
  const { sessionId } = await app.latestAttempt();
  const location = await user.verifyOnHostedPage({ ...handoff, sessionId });
  return { sessionId, location };
}

describe('successPath as a function of the landed attempt', () => {
  it('is told the session and "first", then "replay" on a reload; the user is sent to what it returned', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const { sessionId, location } = await land(alice, 'to_outcome');

    const first = await alice.request(location);
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe(`/done/phone?session=${encodeURIComponent(sessionId)}&fulfilment=first`);
    const reload = await alice.request(location);
    expect(reload.status).toBe(303);
    expect(reload.headers.get('location')).toBe(
      `/done/phone?session=${encodeURIComponent(sessionId)}&fulfilment=replay`,
    );
    expect(ran.filter((id) => id === sessionId)).toHaveLength(1);
    expect(told.filter((landed) => landed.sessionId === sessionId)).toEqual([
      {
        sessionId,
        userRef: 'user-alice',
        action: 'to_outcome',
        params: null,
        outcome: 'fulfilled',
        fulfilment: 'first',
      },
      {
        sessionId,
        userRef: 'user-alice',
        action: 'to_outcome',
        params: null,
        outcome: 'fulfilled',
        fulfilment: 'replay',
      },
    ]);
  });

  it("is not called for anyone but the attempt's own user, who sees the neutral page", async () => {
    const alice = await app.agent(seen).signIn('alice');
    const { sessionId, location } = await land(alice, 'to_outcome');
    const bob = await app.agent(seen).signIn('bob');
    const landing = await bob.request(location);
    expect(landing.status).toBe(200);
    expect(ran.filter((id) => id === sessionId)).toHaveLength(1);
    expect(told.some((landed) => landed.sessionId === sessionId)).toBe(false);
  });

  for (const [name, why] of [
    ['to_other_site', /successPath returned something other than a same-origin path/],
    ['to_absolute', /successPath returned something other than a same-origin path/],
    ['throws', /successPath failed/],
    ['rejects', /successPath failed/],
  ] as const) {
    it(`${name}: no redirect, the neutral page, an error logged; the action still ran once`, async () => {
      const alice = await app.agent(seen).signIn('alice');
      const { sessionId, location } = await land(alice, name);
      const landing = await alice.request(location);
      expect(landing.status).toBe(200);
      expect(landing.headers.get('location')).toBeNull();
      expect(ran.filter((id) => id === sessionId)).toHaveLength(1);
      expect(await unhandled.settled()).toEqual([]);
      const logged = app.logs.filter((line) => line.includes(sessionId) && line.includes('"level":"error"'));
      expect(logged.length).toBeGreaterThan(0);
      for (const line of logged) expect(line).toMatch(why);
    });
  }

  it('to_number_url: the refused value is logged with the phone number in it masked', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const { sessionId, location } = await land(alice, 'to_number_url');
    expect((await alice.request(location)).headers.get('location')).toBeNull();
    const logged = app.logs.filter((line) => line.includes(sessionId) && line.includes('"level":"error"'));
    expect(logged.map((line) => (JSON.parse(line) as { returned?: unknown }).returned)).toEqual([
      'https://app.example/phones/••\u00a011/verified',
    ]);
    const number = USERS.alice!.destination;
    for (const line of app.logs) expect(line).not.toContain(number.slice(1));
  });
});

describe('the one-time flash: kit.attempts.takeLanded(req) on the success page', () => {
  const landedFor = async (user: Agent) => {
    const answer = await user.request('/test/landed');
    return (JSON.parse(answer.body) as { landed: Record<string, unknown> | null }).landed;
  };

  it('reads the landed attempt once, synchronously, as first then replay: identifiers only', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const { sessionId, location } = await land(alice, 'to_outcome');
    expect(await landedFor(alice)).toBeNull(); // nothing before the landing
    expect((await alice.request(location)).status).toBe(303);
    const landed = await landedFor(alice);
    expect(landed).toEqual({ sessionId, action: 'to_outcome', fulfilment: 'first' });
    expect(await landedFor(alice)).toBeNull(); // read once
    expect((await alice.request(location)).status).toBe(303);
    expect(await landedFor(alice)).toMatchObject({ sessionId, fulfilment: 'replay' });
  });

  it("after the pending page's own check ran the action, the user's arrival it opens is the first fulfilment to them; a reload then is a replay", async () => {
    const alice = await app.agent(seen).signIn('alice');
    const { sessionId, location } = await land(alice, 'to_outcome');
    const toOutcome = (fulfilment: string) =>
      `/done/phone?session=${encodeURIComponent(sessionId)}&fulfilment=${fulfilment}`;
    // The page's check (a fetch that follows no redirect) is what finds the verification and runs it.
    const check = await alice.request(location, { headers: { 'X-Verify-Kit-Check': 'background' } });
    expect(check.status).toBe(303);
    // The page then opens the landing: the user sees the success message, not "already done".
    const shown = await alice.request(location);
    expect(shown.headers.get('location')).toBe(toOutcome('first'));
    expect(await landedFor(alice)).toEqual({ sessionId, action: 'to_outcome', fulfilment: 'first' });
    const reload = await alice.request(location);
    expect(reload.headers.get('location')).toBe(toOutcome('replay'));
    expect(await landedFor(alice)).toMatchObject({ sessionId, fulfilment: 'replay' });
    expect(ran.filter((id) => id === sessionId)).toHaveLength(1);
  });

  it("the pending page's own check and the arrival it opens tell the successPath function 'first' once between them, the arrival", async () => {
    const alice = await app.agent(seen).signIn('alice');
    const { sessionId, location } = await land(alice, 'to_outcome');
    const check = await alice.request(location, { headers: { 'X-Verify-Kit-Check': 'background' } });
    expect(check.status).toBe(303);
    expect((await alice.request(location)).headers.get('location')).toMatch(/fulfilment=first$/);
    expect(told.filter((landed) => landed.sessionId === sessionId).map((landed) => landed.fulfilment)).toEqual([
      'first',
    ]);
    expect(ran.filter((id) => id === sessionId)).toHaveLength(1);
    // The check's answer is never shown: the page opens the landing, which alone picks the success page.
    const checkLocation = new URL(check.headers.get('location') ?? '', location);
    expect(checkLocation.href).toBe(new URL(location).href);
  });

  it("a landing the pending page's check fulfilled is no first fulfilment to another user, nor in another browser", async () => {
    const alice = await app.agent(seen).signIn('alice');
    const { location } = await land(alice, 'to_outcome');
    expect((await alice.request(location, { headers: { 'X-Verify-Kit-Check': 'background' } })).status).toBe(303);
    const elsewhere = await app.agent(seen).signIn('alice');
    expect((await elsewhere.request(location)).headers.get('location')).toMatch(/fulfilment=replay$/);
    const bob = await app.agent(seen).signIn('bob');
    expect((await bob.request(location)).status).toBe(200);
    expect(await landedFor(bob)).toBeNull();
  });

  it("is left for the attempt's own user only, and not when there was no redirect", async () => {
    const alice = await app.agent(seen).signIn('alice');
    const { location } = await land(alice, 'to_outcome');
    const bob = await app.agent(seen).signIn('bob');
    expect((await bob.request(location)).status).toBe(200);
    expect(await landedFor(bob)).toBeNull();
    const refused = await land(alice, 'to_other_site');
    expect((await alice.request(refused.location)).status).toBe(200);
    expect(await landedFor(alice)).toBeNull();
  });
});
