/**
 * Ordering between attempts of one user and one action ('latest', the default): the newest started
 * attempt that is verified wins, and an older one is never applied after a newer one was. Every
 * way an attempt can arrive (landing, mobile completion, sweep), older and newer, verified, pending
 * and abandoned, and concurrent arrivals. `set_note` is a 'latest' action (its effect is a
 * `note:<text>` row, so the rows in id order are the order of application); `grant_badge` opts out
 * with ordering 'independent'.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contextOf } from '../../middleware/create-kit.ts';
import { runSweep } from '../../middleware/sweep/sweep.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import type { Agent } from '../support/agent.ts';
import { DAY_MS } from '../support/clock.ts';
import { newSeen } from '../support/seen.ts';

let app: TestApp;
let mobile: TestApp;
const seen = newSeen();

beforeAll(async () => {
  [app, mobile] = await Promise.all([
    startTestApp(),
    startTestApp({ mobileReturnUrl: 'com.example.kit://verify/return' }),
  ]);
});
afterAll(async () => {
  await Promise.all([app?.close(), mobile?.close()]);
});

interface Started {
  sessionId: string;
  state: string;
}

async function startNote(user: Agent, note: string): Promise<Started> {
  await user.start('set_note', { note });
  const row = await app.latestAttempt();
  return { sessionId: row.sessionId, state: row.state };
}

const verify = (on: TestApp, a: Started) => on.emulator.control.complete(a.sessionId, { outcome: 'verified' });
const fail = (on: TestApp, a: Started) =>
  on.emulator.control.complete(a.sessionId, { outcome: 'failed', reason: 'otp_locked' });

/** The notes applied for a user, in the order they were applied, with each attempt's start order (from the store). */
async function applied(on: TestApp, userRef: string): Promise<{ note: string; startSeq: number | undefined }[]> {
  const attempts = await on.store.listAttempts({ userRef, limit: Number.MAX_SAFE_INTEGER });
  const startSeqOf = new Map(attempts.map((a) => [a.sessionId, a.startSeq]));
  const notes = on.db
    .prepare(
      "SELECT session_id AS sessionId, detail FROM test_effects WHERE user_ref = ? AND detail LIKE 'note:%' ORDER BY id",
    )
    .all(userRef) as { sessionId: string; detail: string }[];
  return notes.map((row) => ({ note: row.detail.slice('note:'.length), startSeq: startSeqOf.get(row.sessionId) }));
}

/** The invariant: applications happen in increasing start order, so the last applied is the newest. */
async function expectNeverOlderAfterNewer(on: TestApp, userRef: string): Promise<void> {
  const seqs = (await applied(on, userRef)).map((row) => row.startSeq!);
  expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
}

const currentNote = async (on: TestApp, userRef: string) => (await applied(on, userRef)).at(-1)?.note;
const outcome = async (on: TestApp, a: Started) => (await on.attempt(a.sessionId))?.outcome;

const sweep = (on: TestApp, owner: string, concurrency = 4) =>
  runSweep({ ...contextOf(on.kit), now: () => Date.now() + 10 * 60_000 }, { owner, concurrency });

describe('landing', () => {
  it('an older verified attempt landing after a newer one was applied is superseded: its own page, nothing applied', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const older = await startNote(alice, 'older one');
    const newer = await startNote(alice, 'newer one');
    await verify(app, older);
    await verify(app, newer);
    expect((await alice.landFor(newer.sessionId, newer.state)).status).toBe(303);

    const late = await alice.landFor(older.sessionId, older.state);
    const html = await late.text();
    expect(late.status).toBe(200);
    expect(html).toContain('A newer request replaced this one');
    expect(html).not.toContain('name="restart"');
    expect(await currentNote(app, 'user-alice')).toBe('newer one');
    expect(app.grants(older.sessionId)).toBe(0);
    expect(await app.attempt(older.sessionId)).toMatchObject({ outcome: 'superseded' });
    const logged = app.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
    const line = expect.objectContaining({ sessionId: older.sessionId, outcome: 'superseded', route: 'landing' });
    expect(logged).toContainEqual(line);
    await expectNeverOlderAfterNewer(app, 'user-alice');
  });

  it('applying a newer attempt settles the older still-pending ones at once: verified later, they never apply', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const older = await startNote(alice, 'pending older');
    const newer = await startNote(alice, 'applied newer');
    await verify(app, newer);
    await alice.landFor(newer.sessionId, newer.state);
    expect(await outcome(app, older)).toBe('superseded');
    expect((await app.attempt(older.sessionId))?.supersededBy).toBe(newer.sessionId);

    await verify(app, older); // the user finishes the old tab afterwards
    await alice.landFor(older.sessionId, older.state);
    const report = await sweep(app, 'ordering-pending-older');
    expect(report.fulfilled).toBe(0);
    expect(await currentNote(app, 'user-alice')).toBe('applied newer');
    expect(app.grants(older.sessionId)).toBe(0);
  });

  it(
    'an older verified attempt still applies when the newer one was abandoned (failed): it is ' +
      'the newest verified intent',
    async () => {
      const bob = await app.agent(seen).signIn('bob');
      const older = await startNote(bob, 'kept older');
      const newer = await startNote(bob, 'abandoned newer');
      await verify(app, older);
      await fail(app, newer);
      await bob.landFor(newer.sessionId, newer.state);
      expect(await outcome(app, newer)).toBe('failed');
      expect((await bob.landFor(older.sessionId, older.state)).status).toBe(303);
      expect(await currentNote(app, 'user-bob')).toBe('kept older');
    },
  );

  it(
    'an older verified attempt applies while the newer one is still pending; the newer one, ' +
      'verified later, applies after it',
    async () => {
      const bob = await app.agent(seen).signIn('bob');
      const older = await startNote(bob, 'first applied');
      const newer = await startNote(bob, 'then newer');
      await verify(app, older);
      expect((await bob.landFor(older.sessionId, older.state)).status).toBe(303);
      expect(await outcome(app, newer)).toBe('pending');
      await verify(app, newer);
      expect((await bob.landFor(newer.sessionId, newer.state)).status).toBe(303);
      expect(await currentNote(app, 'user-bob')).toBe('then newer');
      await expectNeverOlderAfterNewer(app, 'user-bob');
    },
  );

  it("one user's ordering never touches another user's attempts of the same action", async () => {
    const alice = await app.agent(seen).signIn('alice');
    const bob = await app.agent(seen).signIn('bob');
    const bobsOlder = await startNote(bob, 'bob before alice');
    const alicesNewer = await startNote(alice, 'alice after bob');
    await verify(app, alicesNewer);
    await alice.landFor(alicesNewer.sessionId, alicesNewer.state);
    expect(await outcome(app, bobsOlder)).toBe('pending');
    await verify(app, bobsOlder);
    expect((await bob.landFor(bobsOlder.sessionId, bobsOlder.state)).status).toBe(303);
    expect(await currentNote(app, 'user-bob')).toBe('bob before alice');
  });
});

describe('sweep', () => {
  it('reads an older verified attempt while the newer one lands: counts it superseded, logs it, applies nothing', async () => {
    const alice = await app.agent(seen).signIn('alice');
    // Started a minute earlier by the clock, the older one falls due first and the sweep reads it first.
    const older = await app.clock.shifted(-60_000, () => startNote(alice, 'swept older'));
    const newer = await startNote(alice, 'landed newer');
    await verify(app, older);
    await verify(app, newer);
    const deps = contextOf(app.kit);
    // The sweep has claimed the older attempt and read "verified"; the newer one lands right then.
    // What the landing answered is checked after the run: the sweep would catch a throw from a read.
    let landedDuringRead: number | undefined;
    const client = {
      async getSession(sessionId: string) {
        const status = await deps.client.getSession(sessionId);
        if (sessionId === older.sessionId)
          landedDuringRead = (await alice.landFor(newer.sessionId, newer.state)).status;
        return status;
      },
    };
    const later = () => Date.now() + 10 * 60_000;
    const report = await runSweep({ ...deps, client, now: later }, { owner: 'ordering-sweep-race' });
    expect(landedDuringRead).toBe(303);
    expect(report.errors).toBe(0);
    expect(report.superseded).toBeGreaterThanOrEqual(1);
    expect(await outcome(app, older)).toBe('superseded');
    expect(await currentNote(app, 'user-alice')).toBe('landed newer');
    const logged = app.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(logged).toContainEqual(
      expect.objectContaining({ sessionId: older.sessionId, outcome: 'superseded', supersededBy: newer.sessionId }),
    );
  });

  it('two verified attempts nobody landed, the newer read first: the newer one is applied, the older superseded', async () => {
    const bob = await app.agent(seen).signIn('bob');
    const older = await startNote(bob, 'sweep older');
    // Started later but dated a minute earlier: the newer one falls due first, so the sweep reads it first.
    const newer = await app.clock.shifted(-60_000, () => startNote(bob, 'sweep newer'));
    await verify(app, newer);
    await verify(app, older);
    await sweep(app, 'ordering-both-verified', 1);
    expect(app.grants(newer.sessionId)).toBe(1);
    expect(await currentNote(app, 'user-bob')).toBe('sweep newer');
    // Settled by the newer one's transaction, so the sweep never even read it again.
    expect(await outcome(app, older)).toBe('superseded');
    expect(app.grants(older.sessionId)).toBe(0);
    await expectNeverOlderAfterNewer(app, 'user-bob');
  });

  it('an older verified attempt whose newer sibling expired is applied by the sweep', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const older = await startNote(alice, 'outlived newer');
    // Started after the older one but dated two days back by the clock (no sleeping): never
    // finished, it is past the 24 h window.
    const newer = await app.clock.shifted(-2 * DAY_MS, () => startNote(alice, 'expired newer'));
    await verify(app, older);
    const report = await sweep(app, 'ordering-newer-expired');
    expect(await outcome(app, newer)).toBe('expired');
    expect(report.fulfilled).toBeGreaterThanOrEqual(1);
    expect(await currentNote(app, 'user-alice')).toBe('outlived newer');
  });
});

describe('concurrent arrivals', () => {
  it('older and newer landing together many times, with a sweep running: the newer one is what stays applied', async () => {
    const bob = await app.agent(seen).signIn('bob');
    const older = await startNote(bob, 'racing older');
    const newer = await startNote(bob, 'racing newer');
    await verify(app, older);
    await verify(app, newer);
    await Promise.all([
      ...Array.from({ length: 6 }, () => bob.landFor(older.sessionId, older.state)),
      ...Array.from({ length: 6 }, () => bob.landFor(newer.sessionId, newer.state)),
      sweep(app, 'ordering-race'),
    ]);
    expect(await currentNote(app, 'user-bob')).toBe('racing newer');
    expect(app.grants(newer.sessionId)).toBe(1);
    expect(app.grants(older.sessionId)).toBeLessThanOrEqual(1);
    expect(['fulfilled', 'superseded']).toContain(await outcome(app, older));
    await expectNeverOlderAfterNewer(app, 'user-bob');
  });
});

describe("ordering 'independent'", () => {
  it('every verified attempt applies, an older one after a newer one included', async () => {
    const alice = await app.agent(seen).signIn('alice');
    await alice.start('grant_badge');
    const older = await app.latestAttempt();
    await alice.start('grant_badge');
    const newer = await app.latestAttempt();
    await app.emulator.control.complete(older.sessionId, { outcome: 'verified' });
    await app.emulator.control.complete(newer.sessionId, { outcome: 'verified' });
    expect((await alice.landFor(newer.sessionId, newer.state)).status).toBe(303);
    expect((await alice.landFor(older.sessionId, older.state)).status).toBe(303);
    expect(app.grants(older.sessionId)).toBe(1);
    expect(app.grants(newer.sessionId)).toBe(1);
  });
});

describe('mobile completion', () => {
  async function startMobile(note: string): Promise<Started> {
    const response = await fetch(`${mobile.url}/verify/start`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-test-user': 'alice' },
      body: JSON.stringify({ action: 'set_note', note }),
    });
    expect(response.status).toBe(200);
    const row = await mobile.latestAttempt();
    return { sessionId: row.sessionId, state: row.state };
  }
  const completeMobile = async (a: Started) => {
    const response = await fetch(`${mobile.url}/verify/mobile/complete`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-test-user': 'alice' },
      body: JSON.stringify({ session_id: a.sessionId, state: a.state }),
    });
    return (await response.json()) as { outcome: string };
  };

  it('an older attempt completed after a newer one answers superseded and applies nothing', async () => {
    const older = await startMobile('mobile older');
    const newer = await startMobile('mobile newer');
    await verify(mobile, older);
    await verify(mobile, newer);
    expect(await completeMobile(newer)).toEqual({ outcome: 'fulfilled' });
    expect(await completeMobile(older)).toEqual({ outcome: 'superseded' });
    expect(await currentNote(mobile, 'user-alice')).toBe('mobile newer');
    expect(mobile.grants(older.sessionId)).toBe(0);
  });

  it('an older verified attempt completes (fulfilled) when the newer one failed', async () => {
    const older = await startMobile('mobile kept');
    const newer = await startMobile('mobile failed');
    await verify(mobile, older);
    await fail(mobile, newer);
    expect(await completeMobile(newer)).toEqual({ outcome: 'failed', reason: 'otp_locked' });
    expect(await completeMobile(older)).toEqual({ outcome: 'fulfilled' });
    expect(await currentNote(mobile, 'user-alice')).toBe('mobile kept');
  });
});
