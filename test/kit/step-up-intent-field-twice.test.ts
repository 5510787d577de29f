/**
 * A guarded form naming the kept-form field (`_verify_kit_intent`) more than once, or with brackets,
 * on SQLite and on PostgreSQL: only the kit's confirmation page sends it, once. Read as a list (or
 * an object) it names no kept form, and the form was neither the user's nor a confirmation: it is
 * refused with 400, nothing kept or sent, rather than kept as a new form holding the list.
 */
import express from 'express';
import { expect, it } from 'vitest';
import { describeEachAppStore } from '../support/app-stores.ts';
import { confirmForm, useStepUpApp } from '../support/step-up.ts';

describeEachAppStore('step-up: the kept-form field sent twice', (_store, storeOptions) => {
  const suite = useStepUpApp(storeOptions, (own, kit) => {
    own.post(
      '/extended/notes',
      express.urlencoded({ extended: true }),
      kit.requireRecentVerification({ scope: 'security', maxAge: 600 }),
      (_req, res) => {
        res.type('html').send('<!doctype html><title>Saved</title><h1>note saved</h1>');
      },
    );
  });

  const keptOf = async (userRef: string) =>
    Number(
      (
        await suite.app.query<{ n: number | string }>(
          'SELECT count(*) AS n FROM verify_kit_intents WHERE user_ref = $1',
          [userRef],
        )
      )[0]!.n,
    );

  it('is refused with 400, nothing kept; the same form without it is kept', async () => {
    const user = await suite.app.agent().signIn('intent-twice');
    const sameSite = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
    for (const [path, body] of [
      ['/accounts/acct-2/payee', 'iban=X&_verify_kit_intent=a&_verify_kit_intent=b'],
      ['/extended/notes', 'note=x&_verify_kit_intent[a]=1'],
    ] as const) {
      const refused = await user.postForm(path, body, sameSite);
      expect(refused.status, body).toBe(400);
      expect(refused.body, body).not.toContain('name="intent"');
    }
    expect(await keptOf('user-intent-twice')).toBe(0);
    confirmForm((await user.postForm('/accounts/acct-2/payee', 'iban=X', sameSite)).body);
    expect(await keptOf('user-intent-twice')).toBe(1);
  });
});
