/**
 * Service faults during create and at the landing, with the emulator's fault controls: retries
 * never send a second SMS, the flow still completes, and refusals surface as clear errors.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VerifyClient } from '../../middleware/index.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import type { Agent, Answer, Started } from '../support/agent.ts';
import { leaks, newSeen } from '../support/seen.ts';

const seen = newSeen();

async function smsDelta(app: TestApp, run: () => Promise<void>) {
  const before = await app.emulator.control.stats();
  await run();
  const after = await app.emulator.control.stats();
  return { sms: after.smsSent - before.smsSent, replays: after.replays - before.replays, after };
}

/**
 * The session creates the kit sent to `app`'s emulator while `run` ran, counted on the wire (every
 * request undici makes is published on this channel): refused and retried ones included, unlike
 * the emulator's `creates`, which counts only the sessions it made.
 */
async function createsSent(app: TestApp, run: () => Promise<void>): Promise<number> {
  const origin = new URL(app.emulator.url).origin;
  let sent = 0;
  const count = (message: unknown) => {
    const { request } = message as { request: { method: string; origin: string | URL; path: string } };
    if (request.method === 'POST' && new URL(String(request.origin)).origin === origin && request.path === '/session')
      sent += 1;
  };
  subscribe('undici:request:create', count);
  try {
    await run();
  } finally {
    unsubscribe('undici:request:create', count);
  }
  return sent;
}

async function finishes(app: TestApp, user: Agent, handoff: Started) {
  const attempt = await app.latestAttempt();
  const location = await user.verifyOnHostedPage({ ...handoff, sessionId: attempt.sessionId });
  const landing = await user.request(location);
  expect(landing.status).toBe(303);
  expect(app.grants(attempt.sessionId)).toBe(1);
}

describe('create faults (default timeouts)', () => {
  let app: TestApp;
  let reuseKey: string | undefined;
  beforeAll(async () => {
    app = await startTestApp({
      wrapClient: (real: VerifyClient): VerifyClient => ({
        createSession: (input, key) => real.createSession(input, reuseKey ?? key),
        getSession: (id) => real.getSession(id),
        close: () => real.close(),
      }),
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('two 503s then success: one SMS, one session, and the flow completes', async () => {
    const alice = await app.agent(seen).signIn('alice');
    await app.emulator.control.setFaults({ createFailures: 2, createStatus: 503 });
    let handoff!: Started;
    const { sms, after } = await smsDelta(app, async () => {
      handoff = await alice.start('grant_badge');
    });
    expect(sms).toBe(1);
    expect(Math.max(...Object.values(after.smsByIdempotencyKey))).toBe(1);
    await finishes(app, alice, handoff);
  });

  it('a connection reset after the service created the session: the retry is replayed, one SMS, and the flow completes', async () => {
    const alice = await app.agent(seen).signIn('alice');
    await app.emulator.control.setFaults({ resetConnections: 1, resetPhase: 'after' });
    let handoff!: Started;
    const { sms, replays, after } = await smsDelta(app, async () => {
      handoff = await alice.start('grant_badge');
    });
    expect(sms).toBe(1);
    expect(replays).toBe(1);
    expect(Math.max(...Object.values(after.smsByIdempotencyKey))).toBe(1);
    await finishes(app, alice, handoff);
  });

  it('422 idempotency_key_reused is surfaced (502 page, nothing stored, the service code logged), not retried', async () => {
    const alice = await app.agent(seen).signIn('alice');
    reuseKey = `fixed-${Date.now()}`;
    try {
      await alice.start('grant_badge'); // first use of the key succeeds
      const attempts = await app.attemptCount();
      const creates = (await app.emulator.control.stats()).creates;
      let response!: Answer;
      const sent = await createsSent(app, async () => {
        response = await alice.postStart({ _csrf: alice.csrf, action: 'grant_badge' });
      });
      // One request: the refusal is final, so the kit never sends the create again.
      expect(sent).toBe(1);
      expect(response.status).toBe(502);
      expect(await response.text()).toContain('problem on our side');
      expect(await app.attemptCount()).toBe(attempts);
      expect((await app.emulator.control.stats()).creates).toBe(creates);
      const logged = app.logs.map((line) => JSON.parse(line) as Record<string, unknown>).at(-1);
      expect(logged).toMatchObject({
        level: 'error',
        route: 'start',
        code: 'service_rejected',
        serviceErrorCode: 'idempotency_key_reused',
      });
    } finally {
      reuseKey = undefined;
    }
  });

  it('the service unavailable at the landing: 503 page, nothing fulfilled, a later landing fulfils once', async () => {
    const alice = await app.agent(seen).signIn('alice');
    const handoff = await alice.start('grant_badge');
    const attempt = await app.latestAttempt();
    const location = await alice.verifyOnHostedPage({ ...handoff, sessionId: attempt.sessionId });
    await app.emulator.control.setFaults({ statusFailures: 10, statusStatus: 503 });
    const down = await alice.request(location);
    expect(down.status).toBe(503);
    expect(await down.text()).toContain('cannot be reached right now');
    expect(app.grants(attempt.sessionId)).toBe(0);
    await app.emulator.control.setFaults({ statusFailures: 0 });
    expect((await alice.request(location)).status).toBe(303);
    expect(app.grants(attempt.sessionId)).toBe(1);
  });

  it('leaks: none in this suite', () => {
    expect(leaks(app, seen)).toEqual([]);
  });
});

describe('409 in flight (short client timeout)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      client: {
        timeouts: { headersMs: 400 },
        retry: { maxAttempts: 12, baseDelayMs: 300, maxDelayMs: 800 },
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('a create still running when the client retries is answered 409, waited out with the same key, and replayed: one SMS', async () => {
    const alice = await app.agent(seen).signIn('alice');
    await app.emulator.control.setFaults({ createDelayMs: 1200 });
    let handoff!: Started;
    const began = Date.now();
    const { sms, replays, after } = await smsDelta(app, async () => {
      try {
        handoff = await alice.start('grant_badge');
      } finally {
        await app.emulator.control.setFaults({ createDelayMs: 0 });
      }
    });
    // the first try timed out after 400 ms; the answer came only after the 1200 ms create finished
    expect(Date.now() - began).toBeGreaterThanOrEqual(1200);
    expect(sms).toBe(1);
    expect(replays).toBeGreaterThanOrEqual(1);
    expect(Object.values(after.smsByIdempotencyKey)).toEqual([1]);
    expect(await app.attemptCount()).toBe(1);
    await finishes(app, alice, handoff);
  });

  it('leaks: none in this suite', () => {
    expect(leaks(app, seen)).toEqual([]);
  });
});
