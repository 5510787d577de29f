/**
 * The attack catalogue, one named test per attack, each over real HTTP against the demo app
 * (createDemoApp on localhost) and the emulator (127.0.0.1). The "service echo" attacks put a
 * small rewriting proxy between the app's backend client and the emulator (test/support/security-stack.ts), so the
 * app really receives a tampered GET /session body over HTTP.
 *
 * The last test searches everything this file produced (every exchange, header, URL, log and
 * console line) for the client secret and the handoffs.
 */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// The demo's kit comes from the built package: its internals from the same build.
import { contextOf } from '../../dist/middleware/create-kit.js';
import { runSweep } from '../../dist/middleware/sweep/sweep.js';
import type { Agent } from '../support/agent.ts';
import {
  activityOf,
  attemptOf,
  captureConsole,
  foreignLocations,
  fulfilments,
  leaks,
  snapshot,
  startSecStack,
  type SecStack,
} from '../support/security-stack.ts';
import { GENEROUS_START_LIMITS } from '../support/limits.ts';
import { DEMO_USERS } from '../support/users.ts';

let stack: SecStack;
let restoreConsole: () => void;

beforeAll(async () => {
  stack = await startSecStack({ startLimits: GENEROUS_START_LIMITS });
  restoreConsole = captureConsole(stack.recorder.logs);
});
afterAll(async () => {
  restoreConsole?.();
  await stack?.close();
});

async function signedIn(user: keyof typeof DEMO_USERS): Promise<Agent> {
  return stack.agent().signIn(user);
}

/** A started attempt completed as verified through the service (control API: as on the hosted page). */
async function verifiedAttempt(agent: Agent, action = 'confirm_phone', extra: Record<string, string> = {}) {
  const started = await agent.start(action, extra);
  const done = await stack.control.complete(started.sessionId, { outcome: 'verified' });
  expect(done.status).toBe(200);
  return started;
}

describe('forged and replayed returns', () => {
  it('forged return with random values: 400, nothing written, no status read', async () => {
    const alice = await signedIn('alice');
    await verifiedAttempt(alice); // a real attempt exists, so "nothing written" means something
    const before = await snapshot(stack);
    const readsBefore = (await stack.control.stats()).statusReads;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ maxLength: 60 }),
          fc.stringMatching(/^[A-Za-z0-9_-]{43}$/),
          fc.constant(randomBytes(32).toString('base64url')),
        ),
        fc.oneof(fc.string({ maxLength: 60 }), fc.uuid()),
        async (state, sessionId) => {
          const answer = await alice.landFor(sessionId, state);
          expect(answer.status).toBeGreaterThanOrEqual(400);
          expect(answer.status).toBeLessThan(500);
          expect(answer.location).toBeNull();
        },
      ),
      { numRuns: 25 },
    );
    expect(await snapshot(stack)).toEqual(before);
    expect((await stack.control.stats()).statusReads).toBe(readsBefore);
  });

  it("a valid session_id with another attempt's state: 400, neither attempt fulfilled", async () => {
    const alice = await signedIn('alice');
    const one = await verifiedAttempt(alice);
    const two = await verifiedAttempt(alice, 'change_payout', { accountNumber: '12345678901' });
    const before = await snapshot(stack);
    const crossed = await alice.landFor(one.sessionId, two.state);
    expect(crossed.status).toBe(400);
    expect(crossed.location).toBeNull();
    expect(await snapshot(stack)).toEqual(before);
    expect(fulfilments(stack, one.sessionId) + fulfilments(stack, two.sessionId)).toBe(0);
    // Each attempt still lands correctly with its own pair.
    expect((await alice.landFor(one.sessionId, one.state)).location).toBe('/verified/phone');
    expect((await alice.landFor(two.sessionId, two.state)).location).toBe('/verified/payout');
    expect(fulfilments(stack, one.sessionId)).toBe(1);
    expect(fulfilments(stack, two.sessionId)).toBe(1);
  });

  it("the reverse: a victim's state with the session_id of a session the attacker verified himself: 400, nothing fulfilled", async () => {
    const victim = await signedIn('alice');
    const pending = await victim.start('change_payout', { accountNumber: '99990000111' });
    // The attacker owns a verified session of the same client (e.g. his own finished attempt).
    const bob = await signedIn('bob');
    const own = await verifiedAttempt(bob);
    const before = await snapshot(stack);
    const forged = await bob.landFor(own.sessionId, pending.state);
    expect(forged.status).toBe(400);
    const inVictimBrowser = await victim.landFor(own.sessionId, pending.state);
    expect(inVictimBrowser.status).toBe(400);
    expect(await snapshot(stack)).toEqual(before);
    expect((await attemptOf(stack, pending.sessionId))?.outcome).toBe('pending');
    expect(
      stack.demo.db
        .prepare('SELECT COUNT(*) AS n FROM demo_payout_accounts WHERE account_number = ?')
        .get('99990000111'),
    ).toEqual({ n: 0 });
  });

  it("another user's attempt landed in a victim's browser: nothing runs for the victim; only the attempt's owner is fulfilled", async () => {
    const mallory = await signedIn('bob');
    const victim = await signedIn('chen');
    const victimActivity = activityOf(stack, DEMO_USERS.chen.id);
    const victimRow = stack.demo.db.prepare('SELECT * FROM demo_users WHERE id = ?').get(DEMO_USERS.chen.id);
    // Mallory starts a payout change for HIS account and verifies with HIS phone on the real hosted page ...
    const started = await mallory.start('change_payout', { accountNumber: '55554444333' });
    const location = await mallory.verifyOnHostedPage(started);
    expect(location.startsWith(`${stack.returnUrl}?`)).toBe(true);
    // ... but sends the return link to the victim, who opens it signed in as herself.
    const landing = await victim.request(location);
    expect(landing.status).toBe(200);
    expect(landing.location).toBeNull();
    expect(landing.body).not.toContain('55554444333');
    expect(landing.body).not.toContain('4333');
    expect(activityOf(stack, DEMO_USERS.chen.id)).toBe(victimActivity);
    expect(stack.demo.db.prepare('SELECT * FROM demo_users WHERE id = ?').get(DEMO_USERS.chen.id)).toEqual(victimRow);
    expect(
      stack.demo.db.prepare('SELECT COUNT(*) AS n FROM demo_payout_accounts WHERE user_id = ?').get(DEMO_USERS.chen.id),
    ).toEqual({ n: 0 });
    // The action ran once, for its owner (the attempt's userRef), whoever's browser landed it.
    expect(fulfilments(stack, started.sessionId)).toBe(1);
    const row = stack.demo.db.prepare('SELECT user_id FROM demo_activity WHERE session_id = ?').get(started.sessionId);
    expect(row).toEqual({ user_id: DEMO_USERS.bob.id });
    // Mallory's own landing afterwards: the same single fulfilment.
    expect((await mallory.request(location)).location).toBe('/verified/payout');
    expect(fulfilments(stack, started.sessionId)).toBe(1);
  });

  it('replay of a fulfilled landing (sequential and concurrent): still one fulfilment', async () => {
    const alice = await signedIn('alice');
    const started = await alice.start('confirm_phone');
    const location = await alice.verifyOnHostedPage(started);
    expect((await alice.request(location)).location).toBe('/verified/phone');
    const before = await snapshot(stack);
    for (let i = 0; i < 3; i++) expect((await alice.request(location)).location).toBe('/verified/phone');
    const burst = await Promise.all(Array.from({ length: 8 }, () => alice.request(location)));
    for (const answer of burst) expect(answer.location).toBe('/verified/phone');
    expect(fulfilments(stack, started.sessionId)).toBe(1);
    const after = (await snapshot(stack)) as Record<string, unknown>;
    expect(after.demo_activity).toEqual((before as Record<string, unknown>).demo_activity);
    expect(after.verify_kit_attempts).toEqual((before as Record<string, unknown>).verify_kit_attempts);
  });

  it('concurrent first landings (double click, reload, second tab) of a verified attempt: one fulfilment, every answer the redirect', async () => {
    const alice = await signedIn('alice');
    const started = await verifiedAttempt(alice);
    const burst = await Promise.all(Array.from({ length: 12 }, () => alice.landFor(started.sessionId, started.state)));
    for (const answer of burst) expect(`${answer.status} ${answer.location}`).toBe('303 /verified/phone');
    expect(fulfilments(stack, started.sessionId)).toBe(1);
  });

  it('status pending presented as success (landing before the user finished): no fulfilment, no redirect', async () => {
    const alice = await signedIn('alice');
    const started = await alice.start('confirm_phone');
    const landing = await alice.landFor(started.sessionId, started.state);
    expect(landing.status).toBe(200);
    expect(landing.location).toBeNull();
    expect(landing.body).not.toContain('/verified/phone');
    expect(fulfilments(stack, started.sessionId)).toBe(0);
    expect((await attemptOf(stack, started.sessionId))?.outcome).toBe('pending');
  });

  it('status failed presented as success (landing after a failure): no fulfilment, ever', async () => {
    const alice = await signedIn('alice');
    const started = await alice.start('change_payout', { accountNumber: '22223333444' });
    // Five wrong codes on the real hosted page lock the session (emulator: otp_locked).
    const page = await alice.postForm(started.verifyUrl, { hx: started.handoff });
    const binding = /name="page_binding" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
    const code = await stack.control.codeFor(started.sessionId);
    const wrong = code === '000000' ? '111111' : '000000';
    let location: string | null = null;
    for (let i = 0; i < 5 && location === null; i++) {
      location = (await alice.postForm(`${started.verifyUrl}/code`, { page_binding: binding, code: wrong })).location;
    }
    expect(location).not.toBeNull();
    for (let i = 0; i < 3; i++) {
      const landing = await alice.request(location!);
      expect(landing.status).toBe(200);
      expect(landing.location).toBeNull();
    }
    expect(fulfilments(stack, started.sessionId)).toBe(0);
    expect(await attemptOf(stack, started.sessionId)).toMatchObject({ outcome: 'failed', failureReason: 'otp_locked' });
    // The correct code after the lock changes nothing either.
    await alice.postForm(`${started.verifyUrl}/code`, { page_binding: binding, code });
    await alice.request(location!);
    await stack.demo.kit.runSweep({ owner: 'attack-sweep' });
    expect(fulfilments(stack, started.sessionId)).toBe(0);
    expect(
      stack.demo.db
        .prepare('SELECT COUNT(*) AS n FROM demo_payout_accounts WHERE account_number = ?')
        .get('22223333444'),
    ).toEqual({ n: 0 });
  });
});

describe('a compromised or buggy service response (rewriting proxy between the app and the service)', () => {
  const cases = [
    [
      'echoed state changed by the service',
      (b: Record<string, unknown>) => ({ ...b, state: randomBytes(32).toString('base64url') }),
    ],
    ['echoed userRef changed by the service', (b: Record<string, unknown>) => ({ ...b, userRef: DEMO_USERS.bob.id })],
    [
      'echoed state and userRef missing from the service answer',
      (b: Record<string, unknown>) => ({ ...b, state: undefined, userRef: undefined }),
    ],
  ] as const;
  cases.forEach(([name, rewrite], index) => {
    it(`${name}: no fulfilment by the landing or the sweep`, async () => {
      const alice = await signedIn('alice');
      const started = await verifiedAttempt(alice, 'change_payout', { accountNumber: `3131313131${index}` });
      stack.tamper = (body) => (body.status === 'verified' ? rewrite(body) : body);
      try {
        const landing = await alice.landFor(started.sessionId, started.state);
        expect(landing.status).toBe(502);
        expect(landing.location).toBeNull();
        const report = await runSweep(
          { ...contextOf(stack.demo.kit), now: () => Date.now() + 10 * 60_000 },
          { owner: 'tamper-sweep' },
        );
        expect(report.fulfilled).toBe(0);
        expect(fulfilments(stack, started.sessionId)).toBe(0);
        expect((await attemptOf(stack, started.sessionId))?.outcome).toBe('pending');
        // The proxy really rewrote what the app read.
        const reads = stack.recorder.exchanges.filter(
          (x) => x.who === 'backend' && x.url.endsWith(`/session/${started.sessionId}`),
        );
        expect(reads.length).toBeGreaterThan(0);
      } finally {
        stack.tamper = undefined;
      }
      // With a faithful service again the same attempt fulfils, once.
      expect((await alice.landFor(started.sessionId, started.state)).location).toBe('/verified/payout');
      expect(fulfilments(stack, started.sessionId)).toBe(1);
    });
  });
});

describe('open redirects: every Location the app sends is same-origin and server-chosen', () => {
  const evil = 'https://evil.example/steal';
  const params = ['next', 'returnTo', 'return_to', 'redirect', 'redirect_uri', 'url', 'continue', 'successPath'];

  it('through every parameter of the landing, and a state carrying a URL', async () => {
    const alice = await signedIn('alice');
    const started = await verifiedAttempt(alice);
    for (const p of params) {
      for (const value of [evil, '//evil.example', '/\\evil.example', 'javascript:alert(1)']) {
        const answer = await alice.land(
          `session_id=${encodeURIComponent(started.sessionId)}&state=${started.state}&${p}=${encodeURIComponent(value)}`,
        );
        expect(answer.location).toBe('/verified/phone');
      }
    }
    for (const state of [
      evil,
      `${started.state}${encodeURIComponent(evil)}`,
      encodeURIComponent(`//evil.example/${started.state}`),
    ]) {
      const answer = await alice.land(`session_id=${encodeURIComponent(started.sessionId)}&state=${state}`);
      expect(answer.status).toBe(400);
      expect(answer.location).toBeNull();
    }
    expect(fulfilments(stack, started.sessionId)).toBe(1);
  });

  it('through the Host, X-Forwarded-Host, X-Forwarded-Proto and Referer headers, on every redirecting route', async () => {
    const evilHeaders: Record<string, string>[] = [
      { host: 'evil.example' },
      { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' },
      { referer: evil },
      { host: 'evil.example', 'x-forwarded-host': 'evil.example', referer: evil },
    ];
    for (const headers of evilHeaders) {
      const alice = await signedIn('alice');
      const started = await verifiedAttempt(alice);
      expect((await alice.landFor(started.sessionId, started.state, headers)).location).toBe('/verified/phone');
      expect((await alice.request('/signin', { headers })).location).toBe('/');
      const out = await alice.postForm(
        '/signout',
        { _csrf: alice.siteCsrf },
        { ...headers, 'sec-fetch-site': 'same-origin' },
      );
      expect(out.location).toBe('/signin');
      expect((await alice.request('/', { headers })).location).toBe('/signin');
      expect((await alice.request('/verified/payout', { headers })).location).toBe('/signin');
      const page = await alice.request('/signin');
      const token = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
      const next = `&next=${encodeURIComponent(evil)}&returnTo=${encodeURIComponent(evil)}`;
      const back = await alice.postForm(
        '/signin',
        `_csrf=${encodeURIComponent(token)}&userId=usr_alice${next}`,
        headers,
      );
      expect(back.location).toBe('/');
    }
  });

  it('no Location sent during this whole file pointed anywhere but a fixed same-origin path', () => {
    const locations = stack.recorder.exchanges.filter(
      (x) => x.who === 'ua' && x.url.startsWith(stack.demoUrl) && x.responseHeaders.location,
    );
    expect(locations.length).toBeGreaterThan(20);
    expect(foreignLocations(stack)).toEqual([]);
  });
});

describe('CSRF on start: refused with 403, no session created, nothing written', () => {
  async function refused(agent: Agent, send: () => Promise<{ status: number; body: string }>) {
    const before = await snapshot(stack);
    const stats = await stack.control.stats();
    const answer = await send();
    expect(answer.status).toBe(403);
    expect(answer.body).not.toContain('verify-kit-handoff');
    const after = await stack.control.stats();
    expect(after.creates).toBe(stats.creates);
    expect(after.smsSent).toBe(stats.smsSent);
    expect(await snapshot(stack)).toEqual(before);
    void agent;
  }

  it('no token', async () => {
    const alice = await signedIn('alice');
    await refused(alice, () => alice.postStart({ action: 'confirm_phone' }));
  });

  it('wrong token', async () => {
    const alice = await signedIn('alice');
    await refused(alice, () =>
      alice.postStart({ _csrf: randomBytes(32).toString('base64url'), action: 'confirm_phone' }),
    );
    await refused(alice, () => alice.postStart({ _csrf: `${alice.csrf}x`, action: 'confirm_phone' }));
    await refused(alice, () => alice.postStart({ _csrf: '', action: 'confirm_phone' }));
  });

  it("token of another session (the attacker's own token, the victim's cookie)", async () => {
    const alice = await signedIn('alice');
    const mallory = await signedIn('bob');
    expect(mallory.csrf).not.toBe(alice.csrf);
    await refused(alice, () => alice.postStart({ _csrf: mallory.csrf, action: 'confirm_phone' }));
    // The demo's own token is not the kit's either.
    await refused(alice, () => alice.postStart({ _csrf: alice.siteCsrf, action: 'confirm_phone' }));
  });

  it('cross-site Sec-Fetch-Site, even with the right token', async () => {
    const alice = await signedIn('alice');
    await refused(alice, () =>
      alice.postStart(
        { _csrf: alice.csrf, action: 'confirm_phone' },
        { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' },
      ),
    );
    await refused(alice, () =>
      alice.postStart(
        { _csrf: alice.csrf, action: 'confirm_phone' },
        { 'sec-fetch-site': 'cross-site', origin: stack.demoUrl },
      ),
    );
  });

  it('foreign Origin, even with the right token', async () => {
    const alice = await signedIn('alice');
    for (const origin of [
      'https://evil.example',
      stack.emulatorUrl,
      stack.demoUrl.replace('localhost', '127.0.0.1'),
      `${stack.demoUrl}.evil.example`,
    ]) {
      await refused(alice, () =>
        alice.postStart({ _csrf: alice.csrf, action: 'confirm_phone' }, { origin, 'sec-fetch-site': 'same-site' }),
      );
    }
  });

  it('control: the same request with the right token and origin does start (so the refusals above are the defence)', async () => {
    const alice = await signedIn('alice');
    const creates = (await stack.control.stats()).creates;
    const started = await alice.start('confirm_phone');
    expect((await stack.control.stats()).creates).toBe(creates + 1);
    expect((await attemptOf(stack, started.sessionId))?.userRef).toBe(DEMO_USERS.alice.id);
  });
});

describe('framing: the handoff page and the hosted page refuse to be framed (headers)', () => {
  it("the kit's auto-submit page: X-Frame-Options DENY, CSP frame-ancestors 'none', no-store, no-referrer, form-action to the service and the returnUrl's origin only", async () => {
    const alice = await signedIn('alice');
    const { response: answer, verifyUrl } = await alice.start('confirm_phone');
    expect(answer.headers.get('x-frame-options')).toBe('DENY');
    const csp = answer.headers.get('content-security-policy') ?? '';
    expect(csp.split(',')).toHaveLength(1); // one policy, not helmet's plus the kit's
    expect(csp).toMatch(/(^|;)\s*frame-ancestors 'none'\s*(;|$)/);
    expect(csp).toContain(`form-action ${new URL(verifyUrl).origin} ${new URL(stack.returnUrl).origin};`);
    expect(csp).not.toContain('unsafe-inline');
    expect(answer.headers.get('cache-control')).toContain('no-store');
    expect(answer.headers.get('referrer-policy')).toBe('no-referrer');
  });

  it('the hosted page: X-Frame-Options DENY and CSP frame-ancestors none', async () => {
    const alice = await signedIn('alice');
    const started = await alice.start('confirm_phone');
    const page = await alice.postForm(started.verifyUrl, { hx: started.handoff });
    expect(page.status).toBe(200);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
  });

  it("the demo's own pages (home with the start forms, landing results): X-Frame-Options DENY and frame-ancestors none", async () => {
    const alice = await signedIn('alice');
    for (const path of [
      '/',
      '/signin',
      '/activity',
      '/verify/start-again?action=confirm_phone',
      '/verify/return?session_id=x&state=y',
    ]) {
      const answer = await alice.request(path);
      expect(answer.headers.get('x-frame-options'), path).toBe('DENY');
      expect(answer.headers.get('content-security-policy'), path).toMatch(/frame-ancestors 'none'/);
    }
  });
});

describe('secrets', () => {
  it('the client secret and every handoff are absent from every URL, header, body and log line this file produced', () => {
    const handoffs = stack.recorder.exchanges.filter((x) => x.who === 'backend' && x.method === 'POST').length;
    expect(handoffs).toBeGreaterThan(10);
    expect(stack.recorder.exchanges.length).toBeGreaterThan(200);
    expect(stack.recorder.logs.length).toBeGreaterThan(10);
    expect(leaks(stack)).toEqual([]);
  });
});
