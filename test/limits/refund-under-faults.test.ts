/**
 * A start gives its budget back only when no try of the create can have made a session: every
 * try answered 429. A try whose answer was lost (the service acted, then the connection reset)
 * may have created the session and sent its SMS, so a 429 on the retry after it refunds nothing,
 * and a per-user budget of one start allows one SMS, whatever the faults. A refund that never
 * settles holds the busy answer no longer than `hookTimeouts.limits`.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { KitError, KitErrorCode, type VerifyClient } from '../../middleware/index.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { GENEROUS_START_LIMITS } from '../support/limits.ts';
import { newSeen } from '../support/seen.ts';

let app: TestApp;
beforeEach(async () => {
  app = await startTestApp({
    client: { retry: { maxAttempts: 4, baseDelayMs: 20, maxDelayMs: 50, budgetMs: 2000 } },
    kit: { limits: { ...GENEROUS_START_LIMITS, perUser: { points: 1, durationSeconds: 3600 } } },
  });
});
afterEach(async () => {
  await app.emulator.control.setRateLimits({ createsPerSecond: 0 });
  await app?.close();
});

/** The service acts on the first create and its answer is lost; every retry then meets a 429 (Retry-After 100 s). */
async function lostAnswerThenBusy() {
  await app.emulator.control.setRateLimits({ createsPerSecond: 0.01 });
  await app.emulator.control.injectFaults({ resetConnections: 1, resetPhase: 'after' });
}

it('a lost answer then a 429: the start is not refunded, so a budget of one start allows one SMS', async () => {
  const alice = await app.agent(newSeen()).signIn('alice');
  const answers: number[] = [];
  for (let i = 0; i < 3; i++) {
    await lostAnswerThenBusy();
    answers.push((await alice.tryStart('grant_badge')).status);
  }
  const stats = await app.emulator.control.stats();
  expect({ answers, smsSent: stats.smsSent }).toEqual({ answers: [503, 429, 429], smsSent: 1 });
});

it('every try answered 429: nothing was created, the start is given back and the next one is allowed', async () => {
  const alice = await app.agent(newSeen()).signIn('alice');
  await app.emulator.control.setRateLimits({ createsPerSecond: 0.01 });
  // Spend the service's one create of the next 100 s on another user: alice's creates all meet 429.
  const bob = await app.agent(newSeen()).signIn('bob');
  expect((await bob.tryStart('grant_badge')).status).toBe(200);
  expect((await alice.tryStart('grant_badge')).status).toBe(503);
  await app.emulator.control.setRateLimits({ createsPerSecond: 0 });
  expect((await alice.tryStart('grant_badge')).status).toBe(200);
});

it('a refund that never settles: the busy answer (503) still comes, within hookTimeouts.limits, and the failure is logged', async () => {
  const busy: VerifyClient = {
    createSession: () => Promise.reject(new KitError(KitErrorCode.ServiceBusy, 'busy', { retryAfterSeconds: 1 })),
    getSession: () => Promise.resolve({ status: 'pending' }),
    close: () => Promise.resolve(),
  };
  const hungRefund = await startTestApp({
    wrapClient: () => busy,
    kit: {
      limits: { consume: async () => ({ refund: () => new Promise<never>(() => {}) }) },
      hookTimeouts: { limits: 200 },
    },
  });
  try {
    const alice = await hungRefund.agent(newSeen()).signIn('alice');
    const began = performance.now();
    const answer = await alice.tryStart('grant_badge', {}, 5_000);
    expect(performance.now() - began).toBeLessThan(3_000);
    expect(answer.status).toBe(503);
    const refundLines = hungRefund.logs.filter((line) => line.includes('could not give back a start budget'));
    expect(refundLines.join('\n')).toContain('limits did not settle within 200 ms');
  } finally {
    await hungRefund.close();
  }
});
