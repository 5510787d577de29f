/**
 * A ready client the app passes (`client: myClient`) is the app's code: its status answers are
 * checked as the kit's own client checks the service's. Only `verified`, with the echoed state and
 * userRef, fulfils: a status the kit does not know (a wrapper mapping a newer one, a typo) is a
 * protocol error, never a fulfilment; a failure reason that is not a code is kept as `unknown`.
 * On SQLite and PostgreSQL.
 */
import { afterEach, expect, it } from 'vitest';
import type { SessionStatus, VerifyClient } from '../../middleware/types.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { effectCounts, startTestApp, type TestApp } from '../support/app.ts';

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const STACK_LINE = /\n\s+at [^\n]+:\d+:\d+/;

/** The real client's answers, each passed through `rewrite` (the ready client's own mistake). */
function rewriting(rewrite: (status: SessionStatus) => unknown) {
  return (real: VerifyClient): VerifyClient => ({
    createSession: (input, key) => real.createSession(input, key),
    getSession: async (sessionId) => rewrite(await real.getSession(sessionId)) as SessionStatus,
    close: () => real.close(),
  });
}

describeEachAppStore('a ready client answering what the service never says', (_store, storeOptions) => {
  it.each(['approved', 'expired', undefined])(
    'status %s with the echoed state and userRef: a protocol error, nothing fulfilled',
    async (status) => {
      app = await startTestApp({
        ...(await storeOptions()),
        wrapClient: rewriting((answer) => (answer.status === 'verified' ? { ...answer, status } : answer)),
      });
      const alice = await app.agent().signIn('alice');
      const started = await alice.start('grant_badge');
      const location = await alice.verifyOnHostedPage(started);
      const landing = await alice.request(location);
      expect(landing.status).toBeGreaterThanOrEqual(500);
      expect(landing.body).not.toMatch(STACK_LINE);
      expect((await app.attempt(started.sessionId))?.outcome).toBe('pending');
      expect((await effectCounts(app)).get(started.sessionId)).toBeUndefined();
    },
  );

  it.each([undefined, null, 'verified'])(
    'an answer %j instead of a status: a protocol error, nothing fulfilled',
    async (junk) => {
      app = await startTestApp({
        ...(await storeOptions()),
        wrapClient: rewriting((answer) => (answer.status === 'verified' ? junk : answer)),
      });
      const alice = await app.agent().signIn('alice');
      const started = await alice.start('grant_badge');
      const location = await alice.verifyOnHostedPage(started);
      const landing = await alice.request(location);
      expect(landing.status).toBeGreaterThanOrEqual(500);
      expect(landing.body).not.toMatch(STACK_LINE);
      expect(app.logs.join('\n')).toContain('service_protocol_error');
      expect((await app.attempt(started.sessionId))?.outcome).toBe('pending');
    },
  );

  it('a failure reason that is no code (long text, an object) is kept as unknown', async () => {
    let reason: unknown;
    app = await startTestApp({
      ...(await storeOptions()),
      wrapClient: rewriting((answer) =>
        answer.status === 'verified' ? { ...answer, status: 'failed', reason } : answer,
      ),
    });
    for (const given of [`gateway said: ${'x'.repeat(5000)}`, { nested: true }, 42]) {
      reason = given;
      const alice = await app.agent().signIn('alice');
      const started = await alice.start('grant_badge');
      const location = await alice.verifyOnHostedPage(started);
      const landing = await alice.request(location);
      expect(landing.status).toBeLessThan(500);
      expect(landing.body).not.toMatch(STACK_LINE);
      expect(await app.attempt(started.sessionId)).toMatchObject({ outcome: 'failed', failureReason: 'unknown' });
    }
    for (const line of app.logs) expect(line).not.toContain('x'.repeat(100));
  });
});

describeEachAppStore('a ready client creating a session the service never would', (_store, storeOptions) => {
  it.each([
    ['a javascript: verifyUrl', { verifyUrl: 'javascript:alert(document.cookie)' }],
    ['an empty handoff', { handoff: '' }],
    ['no sessionId', { sessionId: undefined }],
  ])('%s: the error page, no handoff page', async (_name, fields) => {
    app = await startTestApp({
      ...(await storeOptions()),
      wrapClient: (real): VerifyClient => ({
        createSession: async (input, key) => ({ ...(await real.createSession(input, key)), ...fields }) as never,
        getSession: (sessionId) => real.getSession(sessionId),
        close: () => real.close(),
      }),
    });
    const alice = await app.agent().signIn('alice');
    const answer = await alice.tryStart('grant_badge', {});
    expect(answer.status).toBeGreaterThanOrEqual(500);
    expect(answer.body).not.toContain('name="hx"');
    expect(answer.body).not.toContain('javascript:');
    expect(answer.body).not.toMatch(STACK_LINE);
    expect(app.logs.join('\n')).toContain('service_protocol_error');
  });
});
