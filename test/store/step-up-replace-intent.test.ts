/**
 * StepUpStore.replaceIntent on each store the kit ships: a kept request kept anew in place of the
 * old one in one transaction. The old one is used up (its fields cleared) only when the replacement
 * is stored; a used or expired one keeps nothing; one refused at the limit changes nothing; and
 * replacements racing on several instances for a user at the limit each find room.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { NewStepUpIntent, StepUpStore } from '../../middleware/store/types.ts';
import { describeEachStore, type StoreUnderTest } from '../support/stores.ts';

const KEPT_AT = 1_000_000;
const TTL = 15 * 60_000;

function intent(id: string, overrides: Partial<NewStepUpIntent> = {}): NewStepUpIntent {
  return {
    intentId: id,
    userRef: 'user-alice',
    scope: 'payout',
    browserSession: 'browser-1',
    resourceKey: 'acct-1',
    method: 'POST',
    path: '/accounts/acct-1/payee',
    fields: { iban: `IBAN-${id}` },
    createdAt: KEPT_AT,
    expiresAt: KEPT_AT + TTL,
    ...overrides,
  };
}

describeEachStore('replacing a kept request', (kind) => {
  let h: StoreUnderTest;
  const stepUp = () => h.store.stepUp as StepUpStore;
  const live = async () =>
    (await h.query<{ intent_id: string }>('SELECT intent_id FROM verify_kit_intents WHERE consumed_at IS NULL'))
      .map((row) => row.intent_id)
      .sort();
  beforeEach(async () => {
    h = await kind.open();
    for (let n = 1; n <= 3; n++) expect(await stepUp().insertIntent(intent(`old-${n}`), 3)).toBe(true);
  });
  afterEach(async () => {
    await h.dispose();
  });

  it('uses up the old one and keeps the new one at the limit, once', async () => {
    const later = { createdAt: KEPT_AT + 60_000, expiresAt: KEPT_AT + 60_000 + TTL };
    expect(await stepUp().replaceIntent!(intent('new-1', later), 'old-1', 3)).toBe('replaced');
    expect(await stepUp().findIntent('old-1')).toMatchObject({ consumedAt: KEPT_AT + 60_000, fields: null });
    expect(await stepUp().findIntent('new-1')).toMatchObject({ consumedAt: null, fields: { iban: 'IBAN-new-1' } });
    // The old one again (a second tab): nothing more is kept.
    expect(await stepUp().replaceIntent!(intent('new-2', later), 'old-1', 3)).toBe('used');
    expect(await live()).toEqual(['new-1', 'old-2', 'old-3']);
  });

  it('keeps nothing in place of an expired one, and changes nothing when refused at the limit', async () => {
    const expired = { createdAt: KEPT_AT + TTL, expiresAt: KEPT_AT + 2 * TTL };
    expect(await stepUp().replaceIntent!(intent('new-1', expired), 'old-1', 3)).toBe('used');
    expect(await stepUp().findIntent('new-1')).toBeUndefined();
    expect(await stepUp().replaceIntent!(intent('new-2'), 'old-2', 2)).toBe('refused');
    expect(await stepUp().findIntent('old-2')).toMatchObject({ consumedAt: null, fields: { iban: 'IBAN-old-2' } });
    expect(await live()).toEqual(['old-1', 'old-2', 'old-3']);
  });

  it('lets every replacement of a user at the limit through when they race on four instances', async () => {
    const instances = [h.store, ...(await Promise.all([1, 2, 3].map(() => h.openAnother())))];
    const answers = await Promise.all(
      [1, 2, 3].map((n) => (instances[n]!.stepUp as StepUpStore).replaceIntent!(intent(`new-${n}`), `old-${n}`, 3)),
    );
    expect(answers).toEqual(['replaced', 'replaced', 'replaced']);
    expect(await live()).toEqual(['new-1', 'new-2', 'new-3']);
  });
});
