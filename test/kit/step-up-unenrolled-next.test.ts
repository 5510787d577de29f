/**
 * An `onUnenrolled` (the app's own code, for a user with no number) passes on in the ways Express
 * middleware does, and the guard reads them as Express does:
 * - `next(null)`, how a Node-style callback says "no error" (`lookup((err) => next(err))`): for a
 *   kept form confirmed after the user's number was removed, the guarded handler runs once, with
 *   the form's own fields (not the confirmation's token and id), and a replay runs nothing;
 * - a begun answer (a layout's header written with `res.write`) and then `next()`: the guarded
 *   handler does not run, and the begun answer is cut off rather than left open for good.
 */
import express from 'express';
import { afterEach, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { asUserWithoutPhone, confirmForm, SCOPES, useStepUpApp } from '../support/step-up.ts';
import { USERS } from '../support/users.ts';

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describeEachAppStore('an onUnenrolled that begins its answer, then calls next()', (_store, storeOptions) => {
  it('the request ends (answered or cut off) within the deadline, and the guarded handler never runs', async () => {
    const ran = { handler: false };
    app = await startTestApp({
      ...(await storeOptions()),
      kit: { scopes: [...SCOPES], hookTimeouts: { onUnenrolled: 300 } },
      ownRoutes: (routes: express.Express, kit) => {
        routes.get(
          '/security',
          kit.requireRecentVerification({
            scope: 'security',
            maxAge: 600,
            onUnenrolled: (_req, res, next) => {
              res.status(200).type('html').write('<!doctype html><header>Your account</header>');
              next();
            },
          }),
          (_req, res) => {
            ran.handler = true;
            res.end('codes');
          },
        );
      },
    });
    await asUserWithoutPhone(app!, async (nobody) => {
      const outcome = await nobody.request('/security', { timeoutMs: 3_000 }).then(
        () => 'ended',
        (error: Error) => error.message,
      );
      expect(ran.handler).toBe(false);
      // Ended by the kit, or cut off (a socket hang up): never left open until the client gives up.
      expect(outcome).not.toContain('did not answer within');
    });
  });
});

describeEachAppStore(
  'an onUnenrolled passing on with next(null), as a Node-style callback does',
  (_store, storeOptions) => {
    const bodies: unknown[] = [];
    const suite = useStepUpApp(storeOptions, (own, kit) => {
      own.post(
        '/callback-style/:account/payee',
        express.urlencoded({ extended: false }),
        kit.requireRecentVerification({
          scope: 'payout',
          maxAge: 300,
          bindTo: (req) => String(req.params.account),
          // Callback style: the enrolment check's callback hands its (null) error to next.
          onUnenrolled: (_req, _res, next) => {
            setImmediate(() => next(null));
          },
        }),
        (req, res) => {
          bodies.push(req.body);
          res.type('html').send('<!doctype html><title>Saved</title><h1>payee saved</h1>');
        },
      );
    });

    it('runs the kept form once, with its own fields: a replay of the confirmation runs nothing', async () => {
      USERS.callbackStyle = { userRef: 'user-callbackStyle', destination: '+15550009933' };
      try {
        const user = await suite.app.agent().signIn('callbackStyle');
        const sameSite = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
        const path = '/callback-style/acct-9/payee';
        const kept = confirmForm((await user.postForm(path, { iban: 'KEPT-1' }, sameSite)).body);
        USERS.callbackStyle.destination = '';
        const confirm = () => user.postForm(path, { _csrf: user.csrf, _verify_kit_intent: kept.intent }, sameSite);
        const first = await confirm();
        expect(first.body).toContain('payee saved');
        const second = await confirm();
        const third = await confirm();
        // Once, with the form's own fields: never the confirmation's token and id, never again.
        expect(bodies).toEqual([{ iban: 'KEPT-1' }]);
        expect([second.status, third.status]).toEqual([409, 409]);
      } finally {
        delete USERS.callbackStyle;
      }
    });
  },
);
