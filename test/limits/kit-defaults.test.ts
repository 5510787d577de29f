/**
 * Start limits are on by default (counters in the kit's SQLite file): past a budget the start
 * answers 429 with Retry-After and no session is created, so no SMS is sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVerificationKit, createVerifyClient, type VerifyStore } from '../../middleware/index.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { newSeen } from '../support/seen.ts';

let app: TestApp;
const seen = newSeen();

beforeAll(async () => {
  // `limits: undefined` drops the suites' generous budgets: the kit's defaults apply.
  app = await startTestApp({ kit: { limits: undefined } });
});
afterAll(async () => {
  await app?.close();
});

describe('default start limits', () => {
  it('refuse the sixth text to one destination within ten minutes: 429, Retry-After, no session, no SMS', async () => {
    const alice = await app.agent(seen).signIn('alice');
    for (let i = 0; i < 5; i++) {
      const allowed = await alice.postStart({ _csrf: alice.csrf, action: 'grant_badge' });
      expect(allowed.status).toBe(200);
    }
    const before = { attempts: await app.attemptCount(), stats: await app.emulator.control.stats() };
    const refused = await alice.postStart({ _csrf: alice.csrf, action: 'grant_badge' });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(600);
    expect(await refused.text()).toMatch(/Too many verification attempts/);
    const after = await app.emulator.control.stats();
    expect(await app.attemptCount()).toBe(before.attempts);
    expect(after.creates).toBe(before.stats.creates);
    expect(after.smsSent).toBe(before.stats.smsSent);
  });

  it("count on the kit's clock: the destination's window ends ten minutes later, with no counter reset", async () => {
    const alice = await app.agent(seen).signIn('alice');
    expect((await alice.postStart({ _csrf: alice.csrf, action: 'grant_badge' })).status).toBe(429);
    const later = await app.clock.shifted(10 * 60 * 1000 + 1000, () =>
      alice.postStart({ _csrf: alice.csrf, action: 'grant_badge' }),
    );
    expect(later.status).toBe(200);
  });

  it('leave other users and destinations alone', async () => {
    const bob = await app.agent(seen).signIn('bob');
    expect((await bob.postStart({ _csrf: bob.csrf, action: 'grant_badge' })).status).toBe(200);
  });

  it("warn through the kit's logger when X-Forwarded-For arrives while Express's trust proxy is off", async () => {
    const bob = await app.agent(seen).signIn('bob');
    await bob.postStart({ _csrf: bob.csrf, action: 'grant_badge' }, { 'x-forwarded-for': '203.0.113.50' });
    expect(app.logs.filter((line) => line.includes('`trust proxy` is off'))).toHaveLength(1);
  });

  it('cannot be left out silently with a store that counts no start budgets', () => {
    const client = createVerifyClient({ baseUrl: 'http://127.0.0.1:9', clientId: 'c', clientSecret: 'test-secret' });
    const store = new Proxy({} as VerifyStore, {
      get: (_, name) => (name === 'consumeStartBudgets' ? undefined : async () => undefined),
    });
    const build = (extra: object) =>
      createVerificationKit({
        baseUrl: 'http://127.0.0.1:9',
        clientId: 'c',
        clientSecret: 'test-secret',
        returnUrl: 'http://localhost:3000/verify/return',
        store,
        client,
        actions: [{ name: 'a', operationSensitivity: 'normal', successPath: '/', fulfil: () => {} }],
        resolveUser: () => null,
        ...extra,
      });
    expect(() => build({})).toThrow(/Start limits need a counter store/);
    expect(() => build({ dangerouslyDisableStartLimits: true })).not.toThrow();
    expect(() => build({ dangerouslyDisableStartLimits: true, limits: {} })).toThrow(
      /either `limits` or `dangerouslyDisableStartLimits/,
    );
  });
});
