/**
 * `kit.pumping` (what an app's admin page reads and does) never waits on a hung store for good: a
 * pumping store whose calls never settle makes each operation reject with KitError `hook_failed`
 * within `hookTimeouts.limits`, naming the operation and how to give the store longer. A store
 * that answers is read and written as before. A store that fails after the deadline has its reason
 * logged once, naming the operation, described and redacted. On SQLite and PostgreSQL.
 */
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { createVerificationKit, isKitError, KitErrorCode, type VerificationKit } from '../../middleware/index.ts';
import type { PumpingStore, VerifyStore } from '../../middleware/store/types.ts';
import { describeEachStore, type StoreUnderTest } from '../support/stores.ts';
import { watchUnhandledRejections } from '../support/unhandled.ts';

const SECRET = 'top-secret-value-9f8e7d';
const unhandled = watchUnhandledRejections();

/** Short, so the test waits little; the store's real calls (the answering case) finish well within it on a loaded machine. */
const DEADLINE_MS = 300;

/** The store with a pumping store whose every call never settles (a database that stopped answering). */
function withHungPumping(store: VerifyStore<unknown>, call: () => Promise<never> = () => new Promise(() => {})) {
  const pumping = store.pumping as PumpingStore;
  const hung = new Proxy(pumping, {
    get: (target, name, receiver) => {
      const value: unknown = Reflect.get(target, name, receiver);
      return typeof value === 'function' ? call : value;
    },
  });
  return new Proxy(store, {
    get: (target, name, receiver) => (name === 'pumping' ? hung : Reflect.get(target, name, receiver)),
  });
}

function kitOn(store: VerifyStore<unknown>, logged: string[] = []): VerificationKit<unknown> {
  const log = (obj: object, msg?: string) => void logged.push(`${msg ?? ''} ${JSON.stringify(obj)}`);
  return createVerificationKit<unknown>({
    baseUrl: 'http://127.0.0.1:9',
    clientId: 'client-1',
    clientSecret: SECRET,
    logger: { info: () => {}, warn: () => {}, error: log },
    returnUrl: 'http://localhost:3000/verify/return',
    store,
    actions: [{ name: 'grant_badge', operationSensitivity: 'normal', successPath: '/done', fulfil: () => {} }],
    resolveUser: () => null,
    routes: { start: false, landing: false },
    hookTimeouts: { limits: DEADLINE_MS },
  });
}

describeEachStore('kit.pumping on a store that never answers', (kind) => {
  let h: StoreUnderTest;
  beforeEach(async () => {
    h = await kind.open();
  });
  afterEach(async () => {
    await h.dispose();
  });

  it(
    'rejects each operation with hook_failed within hookTimeouts.limits, naming it and the fix',
    { timeout: 5_000 },
    async () => {
      const { pumping } = kitOn(withHungPumping(h.store));
      const operations: [string, () => Promise<unknown>][] = [
        ['tripped', () => pumping.tripped()],
        ['countsByDay', () => pumping.countsByDay({ by: 'block', days: 3 })],
        ['decisions', () => pumping.decisions({ hours: 2 })],
        ['rules', () => pumping.rules()],
        ['block', () => pumping.block({ country: 'NG' }, 1)],
        ['release', () => pumping.release({ block: '+33612345' })],
        ['clear', () => pumping.clear({ user: 'u-1' })],
      ];
      const started = Date.now();
      const errors = await Promise.all(
        operations.map(([, run]) =>
          run().then(
            () => undefined,
            (e: unknown) => e,
          ),
        ),
      );
      expect(Date.now() - started).toBeLessThan(DEADLINE_MS + 700);
      errors.forEach((error, index) => {
        const [name] = operations[index]!;
        expect(isKitError(error, KitErrorCode.HookFailed), `${name}: ${String(error)}`).toBe(true);
        expect((error as Error).message).toBe(
          `kit.pumping.${name}() did not get the store's answer within ${DEADLINE_MS} ms (raise hookTimeouts.limits if the store needs longer).`,
        );
      });
    },
  );

  it('a store that answers is read and written as before, under the same deadline', async () => {
    const { pumping } = kitOn(h.store);
    const rule = await pumping.block({ country: 'NG' }, 1);
    expect(await pumping.rules()).toEqual([rule]);
    expect(await pumping.clear({ country: 'NG' })).toBe(true);
    expect(await pumping.tripped()).toEqual([]);
  });

  it('a store that fails after the deadline has its reason logged once, naming the operation, redacted, no stack', async () => {
    const logged: string[] = [];
    const failLate = () =>
      new Promise<never>((_resolve, reject) => {
        setTimeout(() => reject(new Error(`database connection refused (${SECRET})`)), DEADLINE_MS + 100);
      });
    const { pumping } = kitOn(withHungPumping(h.store, failLate), logged);
    await expect(pumping.rules()).rejects.toThrow(`kit.pumping.rules() did not get the store's answer`);
    await vi.waitFor(() => expect(logged.join('\n')).toContain('database connection refused'), { timeout: 2_000 });
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain('kit.pumping.rules() rejected after its deadline');
    expect(logged[0]).not.toContain(SECRET);
    expect(logged[0]).not.toMatch(/at .*\.(ts|js):\d+/);
    expect(await unhandled.settled()).toEqual([]);
  });
});
