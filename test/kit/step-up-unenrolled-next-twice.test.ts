/**
 * An `onUnenrolled` that calls `next()` twice (a callback that fires twice, or
 * `check(user, () => next()); next();`) hands the request on once: the guarded handler runs once
 * and its own answer reaches the user. On a page the second `next()` would move Express past the
 * handler to its 404 while the handler works; on a kept form it would start a second run, whose
 * lost consumption answers 409 "already carried out" in place of the form that did run. The later
 * call is only logged. On SQLite and PostgreSQL.
 */
import express from 'express';
import { afterEach, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { asUserWithoutPhone, confirmForm, SCOPES } from '../support/step-up.ts';
import { USERS } from '../support/users.ts';

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describeEachAppStore('an onUnenrolled calling next() twice', (_store, storeOptions) => {
  it('a page: the guarded handler’s own answer reaches the user (not a 404 from the second next())', async () => {
    let runs = 0;
    app = await startTestApp({
      ...(await storeOptions()),
      kit: { scopes: [...SCOPES] },
      ownRoutes: (routes: express.Express, kit) => {
        routes.get(
          '/security',
          kit.requireRecentVerification({
            scope: 'security',
            maxAge: 600,
            onUnenrolled: (_req, _res, next) => {
              next();
              next();
            },
          }),
          async (_req, res) => {
            runs += 1;
            await new Promise((r) => setTimeout(r, 50));
            res.type('html').send('<h1>guarded page</h1>');
          },
        );
      },
    });
    await asUserWithoutPhone(app, async (nobody) => {
      const answer = await nobody.request('/security');
      expect(runs).toBe(1);
      expect({ status: answer.status, body: answer.body }).toMatchObject({
        status: 200,
        body: '<h1>guarded page</h1>',
      });
    });
  });

  it('a kept form: the run form’s answer reaches the user, never “already carried out”', async () => {
    const bodies: unknown[] = [];
    app = await startTestApp({
      ...(await storeOptions()),
      kit: { scopes: [...SCOPES] },
      ownRoutes: (routes: express.Express, kit) => {
        routes.post(
          '/twice/:account/payee',
          express.urlencoded({ extended: false }),
          kit.requireRecentVerification({
            scope: 'payout',
            maxAge: 300,
            bindTo: (req) => String(req.params.account),
            onUnenrolled: (_req, _res, next) => {
              next();
              next();
            },
          }),
          async (req, res) => {
            bodies.push(req.body);
            await new Promise((r) => setTimeout(r, 50));
            res.type('html').send('<h1>payee saved</h1>');
          },
        );
      },
    });
    USERS.twiceNext = { userRef: 'user-twiceNext', destination: '+15550009934' };
    try {
      const user = await app.agent().signIn('twiceNext');
      const sameSite = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
      const path = '/twice/acct-9/payee';
      const kept = confirmForm((await user.postForm(path, { iban: 'KEPT-2' }, sameSite)).body);
      USERS.twiceNext.destination = '';
      const answer = await user.postForm(path, { _csrf: user.csrf, _verify_kit_intent: kept.intent }, sameSite);
      expect(bodies).toEqual([{ iban: 'KEPT-2' }]);
      expect({ status: answer.status, saved: answer.body.includes('payee saved') }).toEqual({
        status: 200,
        saved: true,
      });
    } finally {
      delete USERS.twiceNext;
    }
  });
});
