/**
 * kit.grants is called from the app's own sign-out, number-change and support code, so its
 * arguments are checked when it is called and a mistake is refused naming the fix: a scope the kit
 * does not declare (a typo in a sign-out handler) would revoke nothing and leave every grant
 * working while the call reported success; a missing userRef listed no grants as if the user had
 * none, or failed in the database with a constraint's name. Nothing is written or revoked by a
 * refused call. Same suite on every store.
 */
import { afterEach, expect, it } from 'vitest';
import type { StepUpStore } from '../../middleware/store/types.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { SCOPES } from '../support/step-up.ts';

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describeEachAppStore('kit.grants called with a mistake', (_store, storeOptions) => {
  async function appWithGrant(): Promise<TestApp> {
    app = await startTestApp({ ...(await storeOptions()), kit: { scopes: [...SCOPES] } });
    const startedAt = app.clock.now();
    await (app.store.stepUp as StepUpStore).insertGrant({
      sessionId: 'session-alice-security',
      userRef: 'user-alice',
      scope: 'security',
      resourceKey: '',
      browserSession: 'browser-alice',
      startedAt,
      grantedAt: startedAt,
    });
    return app;
  }

  const sessionsOf = async (on: TestApp) =>
    (await on.kit.grants.list({ userRef: 'user-alice' })).map((grant) => grant.sessionId);

  it('revoke with a scope the kit does not declare is refused, naming the declared scopes; the grant still stands', async () => {
    const on = await appWithGrant();
    await expect(on.kit.grants.revoke({ userRef: 'user-alice', scope: 'securty' })).rejects.toThrow(
      'kit.grants.revoke: `scope` must name a scope declared in createVerificationKit',
    );
    expect(await sessionsOf(on)).toEqual(['session-alice-security']);
  });

  it.each([
    ['no userRef', {}],
    ['an empty userRef', { userRef: '' }],
    ['a userRef that is not a string', { userRef: 42 }],
  ])('revoke with %s is refused saying what to pass; nothing is revoked', async (_, query) => {
    const on = await appWithGrant();
    await expect(on.kit.grants.revoke(query as never)).rejects.toThrow(
      "kit.grants.revoke: `userRef` must be the user's userRef (a non-empty string",
    );
    expect(await sessionsOf(on)).toEqual(['session-alice-security']);
  });

  it.each([
    ['no userRef', {}],
    ['a scope the kit does not declare', { userRef: 'user-alice', scope: 'securty' }],
    ['a limit of 0', { userRef: 'user-alice', limit: 0 }],
    ['a negative limit', { userRef: 'user-alice', limit: -1 }],
    ['a limit that is not whole', { userRef: 'user-alice', limit: 2.5 }],
  ])('list with %s is refused, never answered as no grants', async (_, query) => {
    const on = await appWithGrant();
    await expect(on.kit.grants.list(query as never)).rejects.toThrow(
      /^kit\.grants\.list: `(userRef|scope|limit)` must/,
    );
  });

  it('a kit that declares no scopes (a worker sharing the configuration) revokes a scope by name', async () => {
    app = await startTestApp({ ...(await storeOptions()), kit: { scopes: [] } });
    expect(await app.kit.grants.revoke({ userRef: 'user-alice', scope: 'security' })).toBe(0);
    await expect(app.kit.grants.revoke({ userRef: 'user-alice', scope: '' })).rejects.toThrow(
      "kit.grants.revoke: `scope` must be a scope's name",
    );
  });

  it('well-formed calls still list and revoke', async () => {
    const on = await appWithGrant();
    expect(await on.kit.grants.list({ userRef: 'user-alice', scope: 'security', limit: 1 })).toHaveLength(1);
    expect(await on.kit.grants.revoke({ userRef: 'user-alice', scope: 'security' })).toBe(1);
    expect(await sessionsOf(on)).toEqual([]);
  });
});
