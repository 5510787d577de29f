/**
 * The kit's main flow over real HTTP against the emulator: start, the hosted page, the landing,
 * fulfilment exactly once; each failure reason; pending; and no secret or handoff anywhere.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import type { Agent } from '../support/agent.ts';
import { leaks, newSeen } from '../support/seen.ts';

let app: TestApp;
const seen = newSeen();

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.close();
});

async function startedAttempt(user: Agent, action = 'grant_badge', extra: Record<string, string> = {}) {
  const handoff = await user.start(action, extra);
  const attempt = await app.latestAttempt();
  return { handoff, attempt };
}

describe('happy path', () => {
  it('start → hosted page → landing fulfils once and 303s the starting user to the action’s successPath', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const { handoff, attempt } = await startedAttempt(alice);
    expect(handoff.verifyUrl.startsWith(app.emulator.url)).toBe(true);
    expect(attempt.userRef).toBe('user-alice');
    expect(attempt.state).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const location = await alice.verifyOnHostedPage({ ...handoff, sessionId: attempt.sessionId });
    expect(location.startsWith(`${app.returnUrl}?`)).toBe(true);
    expect(app.grants(attempt.sessionId)).toBe(0); // arrival alone did nothing yet

    const landing = await alice.request(location);
    expect(landing.status).toBe(303);
    expect(landing.headers.get('location')).toBe('/done/badge');
    expect(landing.headers.get('cache-control')).toBe('no-store');
    expect(landing.headers.get('referrer-policy')).toBe('no-referrer');
    expect(app.grants(attempt.sessionId)).toBe(1);
    expect((await app.attempt(attempt.sessionId))?.outcome).toBe('fulfilled');
  });

  it('the auto-submit page is no-store, no-referrer, with its own nonce CSP allowing only the verify page origin and the returnUrl origin', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const { handoff } = await startedAttempt(alice);
    const csp = handoff.response.headers.get('content-security-policy') ?? '';
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce).toBeDefined();
    expect(csp).toContain(`form-action ${new URL(app.emulator.url).origin} ${new URL(app.returnUrl).origin};`);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("base-uri 'none'");
    expect(csp).not.toContain("form-action 'self'"); // helmet's default was replaced, not added to
    expect(handoff.response.headers.get('cache-control')).toBe('no-store');
    expect(handoff.response.headers.get('referrer-policy')).toBe('no-referrer');
    // Its text is chosen by Accept-Language.
    expect(handoff.response.headers.get('vary') ?? '').toContain('Accept-Language');
    expect(handoff.html).toContain(`<script nonce="${nonce}">`);
    expect(handoff.html).toContain('<button type="submit">Continue</button>');
    // exactly one script, and it carries the nonce
    expect(handoff.html.match(/<script/g)?.length).toBe(1);
  });

  it('kit pages are sent whole as UTF-8 HTML without an ETag (a no-store page is never revalidated, so none is computed)', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const { handoff } = await startedAttempt(alice);
    const headers = handoff.response.headers;
    expect(headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(Number(headers.get('content-length'))).toBe(Buffer.byteLength(handoff.html));
    expect(headers.get('etag')).toBeNull();
    const again = await alice.request('/verify/start-again?action=grant_badge');
    const body = await again.text();
    expect(again.headers.get('etag')).toBeNull();
    expect(Number(again.headers.get('content-length'))).toBe(Buffer.byteLength(body));
    expect(body).toContain('<form method="post" action="/verify/start">');
  });

  it('every attempt gets a fresh state and a fresh session, and two tabs work side by side', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const first = await startedAttempt(alice);
    const second = await startedAttempt(alice);
    expect(second.attempt.state).not.toBe(first.attempt.state);
    expect(second.attempt.sessionId).not.toBe(first.attempt.sessionId);
    expect(second.handoff.handoff).not.toBe(first.handoff.handoff);
    // finish the second tab first, then the first: both fulfil, each once
    const loc2 = await alice.verifyOnHostedPage({ ...second.handoff, sessionId: second.attempt.sessionId });
    const loc1 = await alice.verifyOnHostedPage({ ...first.handoff, sessionId: first.attempt.sessionId });
    expect((await alice.request(loc2)).status).toBe(303);
    expect((await alice.request(loc1)).status).toBe(303);
    expect(app.grants(first.attempt.sessionId)).toBe(1);
    expect(app.grants(second.attempt.sessionId)).toBe(1);
  });

  it('a reload of the landing after fulfilment redirects again but fulfils nothing more', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const { handoff, attempt } = await startedAttempt(alice);
    const location = await alice.verifyOnHostedPage({ ...handoff, sessionId: attempt.sessionId });
    expect((await alice.request(location)).status).toBe(303);
    const reload = await alice.request(location);
    expect(reload.status).toBe(303);
    expect(reload.headers.get('location')).toBe('/done/badge');
    expect(app.grants(attempt.sessionId)).toBe(1);
  });

  it('20 concurrent landings for one attempt fulfil it exactly once', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const { handoff, attempt } = await startedAttempt(alice);
    const location = await alice.verifyOnHostedPage({ ...handoff, sessionId: attempt.sessionId });
    const before = app.allGrants();
    const answers = await Promise.all(Array.from({ length: 20 }, () => alice.request(location)));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(303));
    expect(app.grants(attempt.sessionId)).toBe(1);
    expect(app.allGrants()).toBe(before + 1);
  });

  it('server-side parameters come from prepare at start and reach fulfil unchanged', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const { handoff, attempt } = await startedAttempt(alice, 'set_note', { note: 'hello there' });
    expect(attempt.params).toEqual({ note: 'hello there' });
    const location = await alice.verifyOnHostedPage({ ...handoff, sessionId: attempt.sessionId });
    const landing = await alice.request(location);
    expect(landing.headers.get('location')).toBe('/done/note');
    const row = app.db.prepare('SELECT detail FROM test_effects WHERE session_id = ?').get(attempt.sessionId) as {
      detail: string;
    };
    expect(row.detail).toBe('note:hello there');
  });
});

describe('failure reasons', () => {
  const reasons: [string, RegExp][] = [
    ['otp_locked', /Too many incorrect codes/],
    ['device_changed', /another device/],
    ['session_binding_failed', /could not be tied to this browser/],
    ['some_future_reason', /Verification failed/],
  ];
  for (const [reason, text] of reasons) {
    it(`failed with ${reason}: its own page, nothing fulfilled, the failure recorded, and a start-again form with a new session`, async () => {
      const alice = await app.agent(seen).signIn('alice');
      const { attempt } = await startedAttempt(alice, 'set_note', { note: 'retry me' });
      const ended = await app.emulator.control.complete(attempt.sessionId, { outcome: 'failed', reason });
      expect(ended.status).toBe(200);
      const landing = await alice.landFor(attempt.sessionId, attempt.state);
      const html = await landing.text();
      expect(landing.status).toBe(200);
      expect(landing.headers.get('cache-control')).toBe('no-store');
      expect(html).toMatch(text);
      expect(app.grants(attempt.sessionId)).toBe(0);
      expect(await app.attempt(attempt.sessionId)).toMatchObject({ outcome: 'failed', failureReason: reason });

      // The start-again form: POST to start, CSRF token, same action, restart from the stored params.
      expect(html).toContain('<form method="post" action="/verify/start">');
      const fields = Object.fromEntries(
        [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]),
      );
      expect(fields).toMatchObject({ _csrf: alice.csrf, action: 'set_note', restart: attempt.state });
      const again = await alice.start('set_note', { restart: fields.restart! });
      const retried = await app.latestAttempt();
      expect(retried.state).not.toBe(attempt.state);
      expect(retried.sessionId).not.toBe(attempt.sessionId);
      expect(retried.params).toEqual({ note: 'retry me' });
      expect(again.handoff).not.toBe('');
    });
  }

  it('a failed attempt’s page shows no details to another signed-in user', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const bob = await app.agent(seen).signIn('bob');
    const { attempt } = await startedAttempt(alice);
    await app.emulator.control.complete(attempt.sessionId, { outcome: 'failed', reason: 'otp_locked' });
    const html = await (await bob.landFor(attempt.sessionId, attempt.state)).text();
    expect(html).toContain('Verification complete');
    expect(html).not.toContain('Too many incorrect codes');
    expect(html).not.toContain('name="restart"');
  });

  it('a restart is refused for another user’s attempt, a pending one, or a fulfilled one', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const bob = await app.agent(seen).signIn('bob');
    const { attempt } = await startedAttempt(alice, 'set_note', { note: 'mine' });
    const pending = await alice.postStart({ _csrf: alice.csrf, action: 'set_note', restart: attempt.state });
    expect(pending.status).toBe(400);
    await app.emulator.control.complete(attempt.sessionId, { outcome: 'failed', reason: 'otp_locked' });
    await alice.landFor(attempt.sessionId, attempt.state);
    const count = await app.attemptCount();
    const stolen = await bob.postStart({ _csrf: bob.csrf, action: 'set_note', restart: attempt.state });
    expect(stolen.status).toBe(400);
    expect(await app.attemptCount()).toBe(count);
  });
});

describe('pending', () => {
  it('a landing while the service says pending re-checks, shows a self-checking page, fulfils nothing', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const { attempt } = await startedAttempt(alice);
    const statusReads = (await app.emulator.control.stats()).statusReads;
    const landing = await alice.landFor(attempt.sessionId, attempt.state);
    const html = await landing.text();
    expect(landing.status).toBe(200);
    // Checked again by script (every 2 s, test app setting) and by the "Check again" link; never a meta refresh.
    expect(html).not.toContain('http-equiv="refresh"');
    expect(html).toContain('var everyMs = 2000;');
    const checkAgain = `/verify/return?session_id=${attempt.sessionId}&amp;state=${attempt.state}`;
    expect(html).toContain(`<a class="button" href="${checkAgain}">Check again</a>`);
    expect(landing.headers.get('x-verify-kit-outcome')).toBe('pending');
    expect(app.grants(attempt.sessionId)).toBe(0);
    expect((await app.attempt(attempt.sessionId))?.outcome).toBe('pending');
    // first read + 2 re-checks (landing.pendingRechecks = 2 in the test app)
    expect((await app.emulator.control.stats()).statusReads - statusReads).toBe(3);
    // The page's own background check reads once: the page is already the loop that checks again.
    const beforeCheck = (await app.emulator.control.stats()).statusReads;
    const check = await alice.landFor(attempt.sessionId, attempt.state, { 'x-verify-kit-check': 'background' });
    expect(check.headers.get('x-verify-kit-outcome')).toBe('pending');
    expect((await app.emulator.control.stats()).statusReads - beforeCheck).toBe(1);

    // the refresh lands again once the service says verified: fulfilled then
    await app.emulator.control.complete(attempt.sessionId, { outcome: 'verified' });
    const again = await alice.landFor(attempt.sessionId, attempt.state);
    expect(again.status).toBe(303);
    expect(app.grants(attempt.sessionId)).toBe(1);
  });

  it("an attempt started under another client id is never read (the service answers pending for another client's sessions): pending page, no read, a warning", async () => {
    const alice = await app.agent(seen).signIn('alice');
    const { attempt } = await startedAttempt(alice);
    expect((await app.attempt(attempt.sessionId))?.clientId).toBe(app.clientId);
    await app.emulator.control.complete(attempt.sessionId, { outcome: 'verified' });
    // As after VERIFY_CLIENT_ID changed: the attempt was started by the kit's previous client.
    app.db
      .prepare('UPDATE verify_kit_attempts SET client_id = ? WHERE session_id = ?')
      .run('previous-client', attempt.sessionId);
    const statusReads = (await app.emulator.control.stats()).statusReads;
    const logged = app.logs.length;
    const landing = await alice.landFor(attempt.sessionId, attempt.state);
    expect(landing.status).toBe(200);
    expect(landing.headers.get('x-verify-kit-outcome')).toBe('pending');
    expect((await app.emulator.control.stats()).statusReads - statusReads).toBe(0);
    expect(app.grants(attempt.sessionId)).toBe(0);
    const warnings = app.logs.slice(logged).filter((line) => line.includes('started under another client id'));
    // One: the landing does not wait to check again what it cannot read (no re-checks).
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0]!)).toMatchObject({
      sessionId: attempt.sessionId,
      startedWithClientId: 'previous-client',
    });

    // The client it was started with reads it again: fulfilled.
    app.db
      .prepare('UPDATE verify_kit_attempts SET client_id = ? WHERE session_id = ?')
      .run(app.clientId, attempt.sessionId);
    const again = await alice.landFor(attempt.sessionId, attempt.state);
    expect(again.status).toBe(303);
    expect(app.grants(attempt.sessionId)).toBe(1);
  });
});

describe('leaks', () => {
  it('the client secret and every handoff are absent from every URL, Location, log line and error of this suite', () => {
    expect(seen.handoffs.length).toBeGreaterThan(5);
    expect(app.logs.length).toBeGreaterThan(5);
    expect(leaks(app, seen)).toEqual([]);
  });
});
