/**
 * kit.grants is called from the app's sign-out and its "signed-in devices" page, and the step-up
 * store is the integrator's code (a store of the app's own, a database that hangs): a list or a
 * revoke whose store call never settles rejects with KitError `store_unavailable` within
 * `hookTimeouts.store`, as every other store call of the kit does, instead of holding the sign-out
 * open for good. A store call that rejects after that is logged, never an unhandled rejection. On
 * SQLite and PostgreSQL.
 */
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { KitError } from '../../middleware/errors.ts';
import type { StepUpStore, VerifyStore } from '../../middleware/store/types.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { SCOPES } from '../support/step-up.ts';
import { watchUnhandledRejections } from '../support/unhandled.ts';
import { nextTurn } from '../support/wait-for.ts';

const STORE_MS = 300;
/** Long enough for the deadline and a loaded machine, far short of a sign-out held open for good. */
const ANSWERED_WITHIN_MS = 5_000;
const unhandled = watchUnhandledRejections();

/** How the store's trouble looks for the step-up methods named in it: never settling, or rejecting late. */
type Trouble = Map<string, 'hangs' | 'rejects late'>;
/** The rejections of calls that reject late, made when the test says: once their deadline has answered. */
const lateRejections: (() => void)[] = [];

function troubled(store: VerifyStore<unknown>, trouble: Trouble): VerifyStore<unknown> {
  const real = store.stepUp!;
  const stepUp = new Proxy(real, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const how = trouble.get(String(key));
        if (how === 'hangs') return new Promise(() => {});
        if (how === 'rejects late') {
          return new Promise((_, reject) => lateRejections.push(() => reject(new Error('database went away'))));
        }
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  }) as StepUpStore;
  return new Proxy(store, {
    get: (target, key) => {
      if (key === 'stepUp') return stepUp;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** What `call` settled with, or 'still waiting' when it had not settled within ANSWERED_WITHIN_MS. */
async function settledWithin(call: Promise<unknown>): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise((resolve) => {
    timer = setTimeout(() => resolve('still waiting'), ANSWERED_WITHIN_MS);
  });
  try {
    return await Promise.race([
      call.then(
        (value) => ({ value }),
        (error: unknown) => error,
      ),
      waited,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

describeEachAppStore('kit.grants on a step-up store that stops answering', (_store, storeOptions) => {
  const trouble: Trouble = new Map();
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      wrapStore: (store) => troubled(store, trouble),
      kit: { scopes: [...SCOPES], hookTimeouts: { store: STORE_MS } },
    });
  });
  afterEach(async () => {
    trouble.clear();
    expect(await unhandled.settled()).toEqual([]);
  });
  afterAll(async () => {
    await app?.close();
  });

  async function grantFor(userRef: string): Promise<void> {
    const startedAt = app.clock.now();
    await app.store.stepUp!.insertGrant({
      sessionId: `session-${userRef}`,
      userRef,
      scope: 'security',
      resourceKey: '',
      browserSession: `browser-${userRef}`,
      startedAt,
      grantedAt: startedAt,
    });
  }

  function expectStoreUnavailable(settled: unknown, call: string): void {
    expect(settled).toBeInstanceOf(KitError);
    expect((settled as KitError).code).toBe('store_unavailable');
    expect((settled as KitError).message).toContain(`kit.grants.${call}() did not get the store's answer within`);
  }

  it('a sign-out’s revoke whose store never answers rejects with store_unavailable; once it answers, the grant is revoked', async () => {
    await grantFor('user-grants-hang-revoke');
    trouble.set('revokeGrants', 'hangs');
    expectStoreUnavailable(
      await settledWithin(app.kit.grants.revoke({ userRef: 'user-grants-hang-revoke' })),
      'revoke',
    );
    trouble.clear();
    expect(await app.kit.grants.revoke({ userRef: 'user-grants-hang-revoke' })).toBe(1);
    expect(await app.kit.grants.list({ userRef: 'user-grants-hang-revoke' })).toEqual([]);
  });

  it('a devices page’s list whose store never answers rejects with store_unavailable, never as no grants', async () => {
    await grantFor('user-grants-hang-list');
    trouble.set('listGrants', 'hangs');
    expectStoreUnavailable(await settledWithin(app.kit.grants.list({ userRef: 'user-grants-hang-list' })), 'list');
    trouble.clear();
    expect((await app.kit.grants.list({ userRef: 'user-grants-hang-list' })).map((g) => g.sessionId)).toEqual([
      'session-user-grants-hang-list',
    ]);
  });

  it.each(['revoke', 'list'] as const)(
    'a %s whose store rejects after the deadline is logged with its reason, never an unhandled rejection',
    async (call) => {
      trouble.set(call === 'revoke' ? 'revokeGrants' : 'listGrants', 'rejects late');
      expectStoreUnavailable(await settledWithin(app.kit.grants[call]({ userRef: 'user-grants-late' })), call);
      for (const rejectNow of lateRejections.splice(0)) rejectNow();
      await nextTurn();
      const logged = app.logs.filter((line) => line.includes(`kit.grants.${call}() rejected after its deadline`));
      expect(logged).toHaveLength(1);
      expect(logged[0]).toContain('database went away');
    },
  );
});
