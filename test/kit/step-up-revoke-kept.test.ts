/**
 * A sign-out's revocation (kit.grants.revoke) ends the user's kept forms with their grants: the
 * form's fields (an IBAN, a new password) are gone from the store at once, not when the kept form
 * expires, and a confirmation sent afterwards runs nothing and keeps nothing anew. A revocation of
 * one scope leaves the kept forms of the others. On SQLite and PostgreSQL.
 */
import { expect, it } from 'vitest';
import { describeEachAppStore } from '../support/app-stores.ts';
import type { TestApp } from '../support/app.ts';
import { confirmForm, useStepUpApp } from '../support/step-up.ts';

/** Every kept request of the user still stored, as "scope fields" (a consumed one's fields are null). */
async function keptOf(app: TestApp, userRef: string): Promise<string[]> {
  const rows = await app.query<{ scope: string; fields: unknown }>(
    'SELECT scope, fields FROM verify_kit_intents WHERE user_ref = $1',
    [userRef],
  );
  return rows.map((row) => `${row.scope} ${typeof row.fields === 'string' ? row.fields : JSON.stringify(row.fields)}`);
}

describeEachAppStore('a kept form after its user signs out', (_store, storeOptions) => {
  const suite = useStepUpApp(storeOptions);

  it('is deleted with its fields by the revocation and cannot be confirmed afterwards', async () => {
    const user = await suite.app.agent().signIn('revoked-kept');
    const userRef = 'user-revoked-kept';
    const sameSite = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
    const page = (await user.postForm('/accounts/acct-r/payee', { iban: 'IBAN-SIGNED-OUT' }, sameSite)).body;
    const form = confirmForm(page);
    const landing = await user.request(
      await user.verifyOnHostedPage(await user.start(form.action, { intent: form.intent })),
    );
    await user.request(landing.location!);
    // Another scope's kept request, which a revocation of payout alone leaves.
    expect((await user.request('/security')).status).toBe(200);
    expect((await keptOf(suite.app, userRef)).sort()).toEqual(['payout {"iban":"IBAN-SIGNED-OUT"}', 'security {}']);

    await suite.app.kit.grants.revoke({ userRef, scope: 'payout' });
    expect(await keptOf(suite.app, userRef)).toEqual(['security {}']);
    await suite.app.kit.grants.revoke({ userRef });
    expect(await keptOf(suite.app, userRef)).toEqual([]);

    const confirmed = await user.postForm(
      '/accounts/acct-r/payee',
      { _csrf: user.csrf, _verify_kit_intent: form.intent },
      sameSite,
    );
    expect(confirmed.status).toBe(409);
    expect(suite.ran.filter((r) => r.user === 'revoked-kept')).toEqual([]);
    expect(await keptOf(suite.app, userRef)).toEqual([]);
  });
});
