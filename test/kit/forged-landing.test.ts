/**
 * Forged and replayed landings never cause a fulfilment; malformed ones are a 400 with nothing
 * written and no status read. The echo-tampering cases wrap the real client so the status read
 * reports a state or userRef other than the stored one (the emulator itself echoes faithfully).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SessionStatus, VerifyClient } from '../../middleware/index.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import type { Agent } from '../support/agent.ts';
import { leaks, newSeen } from '../support/seen.ts';

let app: TestApp;
const seen = newSeen();
let tamper: ((status: SessionStatus) => SessionStatus) | undefined;

beforeAll(async () => {
  app = await startTestApp({
    wrapClient: (real: VerifyClient): VerifyClient => ({
      createSession: (input, key) => real.createSession(input, key),
      getSession: async (id) => {
        const status = await real.getSession(id);
        return tamper === undefined ? status : tamper(status);
      },
      close: () => real.close(),
    }),
  });
});
afterAll(async () => {
  await app?.close();
});
beforeEach(() => {
  tamper = undefined;
});

async function verifiedAttempt(user: Agent) {
  const handoff = await user.start('grant_badge');
  const attempt = await app.latestAttempt();
  const location = await user.verifyOnHostedPage({ ...handoff, sessionId: attempt.sessionId });
  return { attempt, location };
}

/** The effect rows and every stored attempt (through the store), to show a refused landing wrote nothing. */
async function snapshot() {
  const attempts = await app.store.listAttempts({ limit: Number.MAX_SAFE_INTEGER });
  return {
    grants: app.allGrants(),
    attempts: JSON.stringify(attempts.sort((a, b) => a.state.localeCompare(b.state))),
  };
}

describe('forged landings fulfil nothing', () => {
  it('an unknown (well-formed, random) state: 400 page, nothing written', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const { attempt } = await verifiedAttempt(alice);
    const before = await snapshot();
    const forged = await alice.landFor(attempt.sessionId, 'A'.repeat(43));
    expect(forged.status).toBe(400);
    expect(await forged.text()).toContain('No verification attempt matches this link');
    expect(await snapshot()).toEqual(before);
  });

  it('a valid session_id presented with another attempt’s state (and the reverse): 400, neither fulfilled', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const one = await verifiedAttempt(alice);
    const two = await verifiedAttempt(alice);
    const before = await snapshot();
    const crossed = await alice.landFor(one.attempt.sessionId, two.attempt.state);
    expect(crossed.status).toBe(400);
    expect(await crossed.text()).toContain('does not belong to the verification it names');
    const reverse = await alice.landFor(two.attempt.sessionId, one.attempt.state);
    expect(reverse.status).toBe(400);
    expect(await snapshot()).toEqual(before);
    expect(app.grants(one.attempt.sessionId)).toBe(0);
    expect(app.grants(two.attempt.sessionId)).toBe(0);
  });

  it('another user’s verified attempt landed in a victim’s browser: it fulfils for its own user only, and the victim sees no details and no redirect', async () => {
    const mallory = await app.agent(seen).signIn('bob');
    const victim = await app.agent(seen).signIn('alice');
    const { attempt, location } = await verifiedAttempt(mallory);
    const landing = await victim.request(location);
    expect(landing.status).toBe(200);
    expect(landing.headers.get('location')).toBeNull();
    const html = await landing.text();
    expect(html).toContain('Verification complete');
    expect(html).not.toContain('/done/badge');
    const grant = app.db.prepare('SELECT user_ref FROM test_effects WHERE session_id = ?').all(attempt.sessionId);
    expect(grant).toEqual([{ user_ref: 'user-bob' }]); // never for the victim
  });

  it('a signed-out browser landing a verified attempt: the action still runs once (it never depends on who is signed in), no details shown', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const { attempt, location } = await verifiedAttempt(alice);
    const stranger = app.agent(seen);
    const landing = await stranger.request(location);
    expect(landing.status).toBe(200);
    expect(await landing.text()).toContain('Verification complete');
    expect(app.grants(attempt.sessionId)).toBe(1);
  });

  it('a replay of a fulfilled landing fulfils nothing more', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const { attempt, location } = await verifiedAttempt(alice);
    expect((await alice.request(location)).status).toBe(303);
    const before = await snapshot();
    const bob = await app.agent(seen).signIn('bob');
    await bob.request(location);
    await alice.request(location);
    expect(await snapshot()).toEqual(before);
    expect(app.grants(attempt.sessionId)).toBe(1);
  });

  it('open redirect: extra parameters and headers naming a URL never change the 303 target', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const { attempt, location } = await verifiedAttempt(alice);
    const evil = encodeURIComponent('https://evil.example/x');
    const landing = await alice.request(
      `${location}&next=${evil}&returnTo=${evil}&redirect=${evil}&successPath=${evil}`,
      {
        headers: {
          referer: 'https://evil.example/',
          'x-forwarded-host': 'evil.example',
          'x-original-url': '/https://evil.example',
        },
      },
    );
    expect(landing.status).toBe(303);
    expect(landing.headers.get('location')).toBe('/done/badge');
    expect(app.grants(attempt.sessionId)).toBe(1);
  });

  it('a landing while the status is still pending fulfils nothing', async () => {
    const alice = await app.agent(seen).signIn('alice');
    await alice.start('grant_badge');
    const attempt = await app.latestAttempt();
    const landing = await alice.landFor(attempt.sessionId, attempt.state);
    expect(landing.status).toBe(200);
    expect(await landing.text()).toContain('Confirming your verification');
    expect(app.grants(attempt.sessionId)).toBe(0);
    expect((await app.attempt(attempt.sessionId))?.outcome).toBe('pending');
  });

  it('a failed status presented at the landing fulfils nothing', async () => {
    const alice = await app.agent(seen).signIn('alice');
    await alice.start('grant_badge');
    const attempt = await app.latestAttempt();
    await app.emulator.control.complete(attempt.sessionId, { outcome: 'failed', reason: 'device_changed' });
    await alice.landFor(attempt.sessionId, attempt.state);
    expect(app.grants(attempt.sessionId)).toBe(0);
  });

  for (const field of ['state', 'userRef'] as const) {
    it(`verified but the service echoes a different ${field}: 502 page, nothing fulfilled, the attempt stays pending`, async () => {
      const alice = await app.agent(seen).signIn('alice');
      const { attempt, location } = await verifiedAttempt(alice);
      tamper = (status) => ({ ...status, [field]: field === 'state' ? 'B'.repeat(43) : 'user-bob' });
      const landing = await alice.request(location);
      expect(landing.status).toBe(502);
      expect(await landing.text()).toContain('could not be confirmed, so nothing was changed');
      expect(app.grants(attempt.sessionId)).toBe(0);
      expect((await app.attempt(attempt.sessionId))?.outcome).toBe('pending');
      // and once the echo is right again, the same landing fulfils (nothing was lost)
      tamper = undefined;
      expect((await alice.request(location)).status).toBe(303);
      expect(app.grants(attempt.sessionId)).toBe(1);
    });
  }

  it('verified but the echoed state or userRef is missing: nothing fulfilled', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const { attempt, location } = await verifiedAttempt(alice);
    tamper = (status) => ({ status: status.status }) as SessionStatus;
    expect((await alice.request(location)).status).toBe(502);
    expect(app.grants(attempt.sessionId)).toBe(0);
  });
});

describe('malformed landings: 400, nothing written, no status read', () => {
  const goodState = 'C'.repeat(43);
  const cases: [string, string][] = [
    ['no parameters', ''],
    ['no state', 'session_id=abc'],
    ['no session_id', `state=${goodState}`],
    ['empty state', `session_id=abc&state=`],
    ['duplicated state', `session_id=abc&state=${goodState}&state=${goodState}`],
    ['duplicated session_id', `session_id=abc&session_id=abd&state=${goodState}`],
    ['array-shaped state', `session_id=abc&state[]=${goodState}`],
    ['oversized session_id', `session_id=${'a'.repeat(600)}&state=${goodState}`],
    ['session_id with a space', `session_id=a%20b&state=${goodState}`],
    ['session_id with unicode', `session_id=%C3%A9&state=${goodState}`],
    ['session_id with a control character', `session_id=a%00b&state=${goodState}`],
    ['state too short', `session_id=abc&state=${'C'.repeat(42)}`],
    ['state with a non-base64url character', `session_id=abc&state=${'C'.repeat(42)}%2B`],
  ];
  for (const [name, query] of cases) {
    it(`${name}`, async () => {
      const alice = await app.agent(seen).signIn('alice');
      const before = await snapshot();
      const reads = (await app.emulator.control.stats()).statusReads;
      const landing = await alice.land(query);
      expect(landing.status).toBe(400);
      expect(landing.headers.get('cache-control')).toBe('no-store');
      expect(await landing.text()).toMatch(/verification link is (incomplete|malformed)/);
      expect(await snapshot()).toEqual(before);
      expect((await app.emulator.control.stats()).statusReads).toBe(reads);
    });
  }
});

describe('leaks', () => {
  it('the secret and the handoffs appear in no URL, log line or error of this suite', () => {
    expect(seen.handoffs.length).toBeGreaterThan(5);
    expect(leaks(app, seen)).toEqual([]);
  });
});
