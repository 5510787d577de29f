/**
 * A kept form sent back too late for its grant is kept anew in place of the old one. When the old
 * one expires in the moment between the guard's check and that replacement, the user's request is
 * refused (409) and its log line says it expired, never that it was already carried out: it never
 * ran. On SQLite and PostgreSQL, with the kit's clock moved past the expiry by the grant read.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { INTENT_TTL_MS } from '../../middleware/step-up/scope-actions.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { confirmForm, guardedRoutes, SCOPES, withStepUp, type Ran } from '../support/step-up.ts';

describeEachAppStore('a kept form expiring while it is kept anew', (_store, storeOptions) => {
  const ran: Ran[] = [];
  let app: TestApp;
  let aheadMs = 0;
  let expireAtNextGrantRead = false;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      wrapStore: (store) =>
        withStepUp(store, (real) => ({
          // The guard reads the grants after checking the kept form and before keeping it anew.
          listGrants: async (query) => {
            if (expireAtNextGrantRead) [aheadMs, expireAtNextGrantRead] = [INTENT_TTL_MS + 1_000, false];
            return real.listGrants(query);
          },
          replaceIntent: (replacement, replacedId, maxLive) => real.replaceIntent!(replacement, replacedId, maxLive),
        })),
      kit: { scopes: [...SCOPES], now: () => Date.now() + aheadMs },
      ownRoutes: guardedRoutes(ran),
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('is refused with the expired text, not "already carried out", and nothing runs or is kept', async () => {
    const user = await app.agent().signIn('expires-meanwhile');
    const sameSite = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
    const kept = confirmForm((await user.postForm('/accounts/acct-e/payee', { iban: 'EXPIRES-1' }, sameSite)).body);
    expireAtNextGrantRead = true;
    const confirmed = await user.postForm(
      '/accounts/acct-e/payee',
      { _csrf: user.csrf, _verify_kit_intent: kept.intent },
      sameSite,
    );
    expect(expireAtNextGrantRead).toBe(false);
    expect(confirmed.status).toBe(409);
    const lines = app.logs.filter((line) => line.includes('step_up_intent_unusable'));
    expect(lines.join('\n')).toContain('This request expired before it was confirmed');
    expect(lines.join('\n')).not.toContain('already carried out');
    expect(ran).toEqual([]);
    const live = await app.query(
      'SELECT intent_id FROM verify_kit_intents WHERE consumed_at IS NULL AND expires_at > $1',
      [Date.now() + aheadMs],
    );
    expect(live).toEqual([]);
  });
});
