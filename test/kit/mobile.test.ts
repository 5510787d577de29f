/**
 * platform 'mobile': the start route answers JSON, the service returns to the deep link, and the
 * app completes with POST JSON on the same fulfil path as the landing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { type Started } from '../support/agent.ts';
import { leaks, newSeen } from '../support/seen.ts';

let app: TestApp;
const seen = newSeen();
const DEEP_LINK = 'com.example.kit://verify/return';

beforeAll(async () => {
  app = await startTestApp({ mobileReturnUrl: DEEP_LINK });
});
afterAll(async () => {
  await app?.close();
});

/** The app's own client on the phone: no cookies, the signed-in user in a header. */
function post(path: string, user: string | undefined, body: unknown, contentType = 'application/json') {
  return app.agent(seen).request(path, {
    method: 'POST',
    headers: { 'content-type': contentType, ...(user ? { 'x-test-user': user } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function start(user: string): Promise<Started> {
  const response = await post('/verify/start', user, { action: 'grant_badge' });
  expect(response.status).toBe(200);
  expect(response.headers.get('cache-control')).toBe('no-store');
  const body = (await response.json()) as { verifyUrl: string; handoff: string; expiresInSeconds: number };
  expect(Object.keys(body).sort()).toEqual(['expiresInSeconds', 'handoff', 'verifyUrl']);
  seen.handoffs.push(body.handoff);
  const { sessionId, state } = await app.latestAttempt();
  return { response, html: '', verifyUrl: body.verifyUrl, handoff: body.handoff, sessionId, state };
}

function complete(user: string | undefined, body: unknown) {
  return post('/verify/mobile/complete', user, body);
}

describe('mobile flow', () => {
  it('start answers JSON; the deep link returns session_id and state; completion fulfils once and reports it to the user', async () => {
    const handoff = await start('alice');
    expect(handoff.verifyUrl.startsWith(app.emulator.url)).toBe(true);
    const attempt = await app.latestAttempt();
    const location = await app.agent(seen).verifyOnHostedPage({ ...handoff, sessionId: attempt.sessionId });
    expect(location.startsWith(`${DEEP_LINK}?`)).toBe(true);
    const query = new URL(location).searchParams;
    const ids = { session_id: query.get('session_id'), state: query.get('state') };

    const first = await complete('alice', ids);
    expect(first.status).toBe(200);
    expect(first.headers.get('cache-control')).toBe('no-store');
    expect(await first.json()).toEqual({ outcome: 'fulfilled' });
    const again = await complete('alice', ids);
    expect(await again.json()).toEqual({ outcome: 'fulfilled' });
    const many = await Promise.all(Array.from({ length: 10 }, () => complete('alice', ids)));
    expect(many.every((r) => r.status === 200)).toBe(true);
    expect(app.grants(attempt.sessionId)).toBe(1);
  });

  it('another user (or nobody) completing it learns nothing but "processed"', async () => {
    const handoff = await start('alice');
    const attempt = await app.latestAttempt();
    await app.agent(seen).verifyOnHostedPage({ ...handoff, sessionId: attempt.sessionId });
    const ids = { session_id: attempt.sessionId, state: attempt.state };
    expect(await (await complete('bob', ids)).json()).toEqual({ outcome: 'processed' });
    expect(await (await complete(undefined, ids)).json()).toEqual({ outcome: 'processed' });
    expect(app.grants(attempt.sessionId)).toBe(1);
  });

  it('failed: the reason is reported to the user, nothing fulfilled', async () => {
    await start('alice');
    const attempt = await app.latestAttempt();
    await app.emulator.control.complete(attempt.sessionId, { outcome: 'failed', reason: 'otp_locked' });
    const answer = await complete('alice', { session_id: attempt.sessionId, state: attempt.state });
    expect(await answer.json()).toEqual({ outcome: 'failed', reason: 'otp_locked' });
    expect(app.grants(attempt.sessionId)).toBe(0);
  });

  it('pending: reported as pending, nothing fulfilled', async () => {
    await start('alice');
    const attempt = await app.latestAttempt();
    const answer = await complete('alice', { session_id: attempt.sessionId, state: attempt.state });
    expect(await answer.json()).toEqual({ outcome: 'pending' });
    expect(app.grants(attempt.sessionId)).toBe(0);
  });

  it('forged or malformed completions: JSON errors with the KitError status and code, nothing written', async () => {
    await start('alice');
    const attempt = await app.latestAttempt();
    const other = { session_id: 'not-this-one', state: attempt.state };
    const cases: [unknown, number, string][] = [
      [{ session_id: attempt.sessionId, state: 'D'.repeat(43) }, 400, 'unknown_attempt'],
      [other, 400, 'session_mismatch'],
      [{ session_id: attempt.sessionId }, 400, 'invalid_return_params'],
      [{ session_id: [attempt.sessionId], state: attempt.state }, 400, 'invalid_return_params'],
      [{ session_id: attempt.sessionId, state: `${attempt.state}x` }, 400, 'invalid_return_params'],
      ['[1,2]', 400, 'invalid_return_params'],
      ['{not json', 400, 'invalid_return_params'],
    ];
    for (const [body, status, code] of cases) {
      const answer = await complete('alice', body);
      expect(answer.status).toBe(status);
      expect(((await answer.json()) as { error: string }).error).toBe(code);
    }
    const form = await post(
      '/verify/mobile/complete',
      'alice',
      `session_id=${attempt.sessionId}&state=${attempt.state}`,
      'application/x-www-form-urlencoded',
    );
    expect(form.status).toBe(400);
    expect((await app.attempt(attempt.sessionId))?.outcome).toBe('pending');
  });

  it('start refuses a form-encoded (CORS-simple) request and a GET; completion refuses GET', async () => {
    const before = await app.attemptCount();
    const form = await post('/verify/start', 'alice', 'action=grant_badge', 'application/x-www-form-urlencoded');
    expect(form.status).toBe(403);
    expect(((await form.json()) as { error: string }).error).toBe('csrf_failed');
    expect((await fetch(`${app.url}/verify/start`)).status).toBe(405);
    expect((await fetch(`${app.url}/verify/mobile/complete`)).status).toBe(405);
    expect(await app.attemptCount()).toBe(before);
  });

  it('no landing route on the mobile platform', async () => {
    expect((await fetch(`${app.url}/verify/return?session_id=a&state=b`)).status).toBe(404);
  });

  it('leaks: none in this suite', () => {
    expect(leaks(app, seen)).toEqual([]);
  });
});
