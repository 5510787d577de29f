/**
 * A guard whose onUnenrolled lets users without a phone number through (`next()`), and a form kept
 * while the user still had one, on SQLite and on PostgreSQL: confirmed once the number is gone, the
 * handler runs as the app's onUnenrolled allows, with the form's own fields (never the confirmation
 * page's token and intent id in their place), and once: a replay runs nothing (409).
 */
import express from 'express';
import { expect, it } from 'vitest';
import { describeEachAppStore } from '../support/app-stores.ts';
import { confirmForm, useStepUpApp } from '../support/step-up.ts';
import { USERS } from '../support/users.ts';

describeEachAppStore('step-up: a kept form and an onUnenrolled that passes on', (_store, storeOptions) => {
  const bodies: unknown[] = [];
  const suite = useStepUpApp(storeOptions, (own, kit) => {
    own.post(
      '/open-to-unenrolled/:account/payee',
      express.urlencoded({ extended: false }),
      kit.requireRecentVerification({
        scope: 'payout',
        maxAge: 300,
        bindTo: (req) => String(req.params.account),
        onUnenrolled: (_req, _res, next) => next(),
      }),
      (req, res) => {
        bodies.push(req.body);
        res.type('html').send('<!doctype html><title>Saved</title><h1>payee saved</h1>');
      },
    );
  });

  it('runs the handler once with the kept fields, never with the confirmation’s', async () => {
    USERS.passesOn = { userRef: 'user-passesOn', destination: '+15550009922' };
    try {
      const user = await suite.app.agent().signIn('passesOn');
      const sameSite = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
      const path = '/open-to-unenrolled/acct-9/payee';
      const kept = confirmForm((await user.postForm(path, { iban: 'KEPT-1' }, sameSite)).body);
      // The number removed from the account before the user pressed the kept form's button.
      USERS.passesOn.destination = '';
      const confirm = () => user.postForm(path, { _csrf: user.csrf, _verify_kit_intent: kept.intent }, sameSite);
      expect((await confirm()).body).toContain('payee saved');
      expect(bodies).toEqual([{ iban: 'KEPT-1' }]);
      expect((await confirm()).status).toBe(409);
      expect(bodies).toHaveLength(1);
    } finally {
      delete USERS.passesOn;
    }
  });
});
