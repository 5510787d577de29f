/**
 * The emulator's per-client rate limits: off by default; beyond a limit a call is answered 429 with
 * Retry-After in whole seconds and does nothing; set from startEmulator, the environment or /_control.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { loadEnvConfig } from '../../emulator/config/config.ts';
import { RateLimits } from '../../emulator/api/rate-limits.ts';
import {
  OTHER_CLIENT,
  WEB_CLIENT,
  createSession,
  newSession,
  readSession,
  startTestEmulator,
  type TestEmulator,
} from '../support/emulator.ts';

let emulator: TestEmulator | undefined;
afterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

async function readMany(url: string, sessionId: string, n: number, client = WEB_CLIENT) {
  return Promise.all(Array.from({ length: n }, () => readSession(url, client, sessionId)));
}

describe('emulator rate limits', () => {
  it('are off by default: many reads in one second all answer 200', async () => {
    emulator = await startTestEmulator();
    const { sessionId } = await newSession(emulator.url, WEB_CLIENT);
    const answers = await readMany(emulator.url, sessionId, 40);
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(await emulator.control.stats()).toMatchObject({ statusReads: 40, statusReadsLimited: 0 });
  });

  it('answer status reads beyond the limit 429 with Retry-After in seconds, per client', async () => {
    // One read every ten seconds: the bucket holds one, so one read of the burst passes, however slow the machine.
    emulator = await startTestEmulator({ rateLimits: { statusReadsPerSecond: 0.1 } });
    const { sessionId } = await newSession(emulator.url, WEB_CLIENT);
    const answers = await readMany(emulator.url, sessionId, 12);
    const limited = answers.filter((a) => a.status === 429);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    expect(limited).toHaveLength(11);
    for (const answer of limited) {
      expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(9);
      expect(answer.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
      expect(answer.body).toMatchObject({ isSuccess: false, errorCode: 'rate_limited' });
    }
    // Another client has its own budget.
    const other = await newSession(emulator.url, OTHER_CLIENT);
    expect((await readSession(emulator.url, OTHER_CLIENT, other.sessionId)).status).toBe(200);
    const stats = await emulator.control.stats();
    expect(stats.statusReadsLimited).toBe(limited.length);
    expect(stats.statusReads).toBe(13);
  });

  it('refuse creates beyond the limit without creating a session or sending an SMS', async () => {
    emulator = await startTestEmulator({ rateLimits: { createsPerSecond: 0.1 } });
    const answers = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        createSession(emulator!.url, WEB_CLIENT, undefined, { idempotencyKey: `k${i}` }),
      ),
    );
    const created = answers.filter((a) => a.status === 200).length;
    const limited = answers.filter((a) => a.status === 429);
    expect(created).toBe(1);
    expect(created + limited.length).toBe(5);
    expect(limited[0]?.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    const stats = await emulator.control.stats();
    expect(stats).toMatchObject({ creates: created, smsSent: created, createsLimited: limited.length });
  });

  it('are set and read through /_control, and reset restores the limits started with', async () => {
    emulator = await startTestEmulator();
    const { sessionId } = await newSession(emulator.url, WEB_CLIENT);
    expect(await emulator.control.setRateLimits({ statusReadsPerSecond: 2 })).toEqual({
      statusReadsPerSecond: 2,
      createsPerSecond: 0,
    });
    expect((await readMany(emulator.url, sessionId, 6)).some((a) => a.status === 429)).toBe(true);
    await emulator.control.reset();
    const again = await newSession(emulator.url, WEB_CLIENT);
    expect((await readMany(emulator.url, again.sessionId, 6)).every((a) => a.status === 200)).toBe(true);
    const refused = await fetch(`${emulator.url}/_control/rate-limits`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ statusReadsPerSecond: -1 }),
    });
    expect(refused.status).toBe(400);
    await expect(emulator.control.setRateLimits({ perMinute: 3 } as never)).rejects.toThrow(/Unknown rate limit/);
  });

  it('read EMULATOR_STATUS_READS_PER_SECOND and EMULATOR_CREATES_PER_SECOND, refusing bad values', () => {
    expect(loadEnvConfig({}).rateLimits).toBeUndefined();
    expect(
      loadEnvConfig({ EMULATOR_STATUS_READS_PER_SECOND: '300', EMULATOR_CREATES_PER_SECOND: '20' }).rateLimits,
    ).toEqual({ statusReadsPerSecond: 300, createsPerSecond: 20 });
    expect(() => loadEnvConfig({ EMULATOR_STATUS_READS_PER_SECOND: 'fast' })).toThrow(
      /EMULATOR_STATUS_READS_PER_SECOND must be a number/,
    );
  });

  it('refill at the set rate: a caller waiting the announced time is served again', () => {
    const limits = new RateLimits({ statusReadsPerSecond: 10, createsPerSecond: 0 });
    for (let i = 0; i < 10; i++) expect(limits.wait('c', 'status', 1000)).toBe(0);
    const wait = limits.wait('c', 'status', 1000);
    expect(wait).toBeGreaterThan(0);
    expect(limits.wait('c', 'status', 1000 + wait)).toBe(0);
    expect(limits.wait('c', 'create', 1000)).toBe(0);
  });
});
