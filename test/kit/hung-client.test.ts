/**
 * A ready client the app passes (`client: myClient`, e.g. a wrapper adding metrics) is the app's
 * code: a call of it that never settles answers the start or the landing with the kit's error
 * page within `hookTimeouts.client`, instead of holding the request open; the action never runs.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { VerifyClient } from '../../middleware/types.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const STACK_LINE = /\n\s+at [^\n]+:\d+:\d+/;

describe('a ready client whose calls never settle', () => {
  it('a landing whose status read hangs gets the error page within hookTimeouts.client; nothing is fulfilled', async () => {
    let hang = false;
    app = await startTestApp({
      kit: { hookTimeouts: { client: 300 } },
      wrapClient: (real): VerifyClient => ({
        createSession: (input, key) => real.createSession(input, key),
        getSession: (sessionId) => (hang ? new Promise(() => {}) : real.getSession(sessionId)),
        close: () => real.close(),
      }),
    });
    const alice = await app.agent().signIn('alice');
    const started = await alice.start('grant_badge');
    const location = await alice.verifyOnHostedPage(started);
    hang = true;
    const began = performance.now();
    const landing = await alice.request(location, { timeoutMs: 5_000 });
    expect(performance.now() - began).toBeLessThan(3_000);
    expect(landing.status).toBeGreaterThanOrEqual(500);
    expect(landing.body).not.toMatch(STACK_LINE);
    expect((await app.latestAttempt()).outcome).not.toBe('fulfilled');
    expect(app.logs.some((line) => line.includes('did not answer within 300 ms'))).toBe(true);
  });

  it('a start whose create hangs gets the error page within hookTimeouts.client', async () => {
    app = await startTestApp({
      kit: { hookTimeouts: { client: 300 } },
      wrapClient: (real): VerifyClient => ({
        createSession: () => new Promise(() => {}),
        getSession: (sessionId) => real.getSession(sessionId),
        close: () => real.close(),
      }),
    });
    const alice = await app.agent().signIn('alice');
    const began = performance.now();
    const answer = await alice.tryStart('grant_badge', {}, 5_000);
    expect(performance.now() - began).toBeLessThan(3_000);
    expect(answer.status).toBeGreaterThanOrEqual(500);
    expect(answer.body).not.toContain('name="hx"');
    expect(answer.body).not.toMatch(STACK_LINE);
  });
});
