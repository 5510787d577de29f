/**
 * StepUpStore.insertGrant: a grant of a sessionId already stored is kept as it is (the store
 * contract). A landing reloaded later writes the same grant again with the time of that reload:
 * its grantedAt, read by the guard as "just granted", and listed by kit.grants.list, stays the
 * first landing's. An older grant of the same browser session is still replaced.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { StepUpGrant, StepUpStore } from '../../middleware/store/types.ts';
import { describeEachStore, type StoreUnderTest } from '../support/stores.ts';

const grant = (n: number, overrides: Partial<StepUpGrant> = {}): StepUpGrant => ({
  sessionId: `session-${n}`,
  userRef: 'user-alice',
  scope: 'payout',
  resourceKey: 'acct-1',
  browserSession: 'browser-1',
  startedAt: 1_000,
  grantedAt: 1_100,
  ...overrides,
});

describeEachStore('a grant written again', (kind) => {
  let h: StoreUnderTest;
  beforeEach(async () => {
    h = await kind.open();
  });
  afterEach(async () => {
    await h.dispose();
  });
  const stepUp = () => h.store.stepUp as StepUpStore;
  const listed = async () =>
    (await stepUp().listGrants({ userRef: 'user-alice', limit: 10 })).map((g) => [g.sessionId, g.grantedAt]);

  it('keeps the grantedAt it was first written with (a reload of its landing writes nothing more)', async () => {
    await stepUp().insertGrant(grant(1));
    await stepUp().insertGrant(grant(1, { grantedAt: 5_000 }));
    expect(await listed()).toEqual([['session-1', 1_100]]);
  });

  it('still replaces an older grant (and keeps the newer one as it is when written again) of the same user, scope, resource and browser session', async () => {
    await stepUp().insertGrant(grant(1));
    await stepUp().insertGrant(grant(2, { startedAt: 2_000, grantedAt: 2_100 }));
    expect(await listed()).toEqual([['session-2', 2_100]]);
    await stepUp().insertGrant(grant(2, { startedAt: 2_000, grantedAt: 5_000 }));
    expect(await listed()).toEqual([['session-2', 2_100]]);
  });
});
