/**
 * step-up.bound grants each scope of `stepUp` once and requests every route of the other scopes
 * with that grant: with three routes of three scopes, an app where a grant of the third route's
 * scope opens the first route fails, wherever the route is listed.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';
import { userNamed } from '../support/users.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

describe('step-up.bound tries each scope against the others', () => {
  it("fails an app where a grant of the third route's scope opens the first route", async () => {
    const app = await startSampleApp({
      before: (server, ctx) => {
        // A third guarded page, of scope account_closing.
        server.get(
          '/close',
          ctx.kit.requireRecentVerification({ scope: 'account_closing', maxAge: 600 }),
          (_req, res) => {
            res.setHeader('Cache-Control', 'no-store');
            res.send('<!doctype html><title>Close your account</title><p>Close it.</p>');
          },
        );
        // "Who just confirmed it's them to close the account may see it": an account_closing grant opens /account.
        server.get('/account', (req, res, next) => {
          const user = (req.session as { user?: string }).user;
          if (user === undefined) return next();
          ctx.kit.grants.list({ userRef: userNamed(user).userRef, scope: 'account_closing' }).then((grants) => {
            if (grants.length === 0) return next();
            res.setHeader('Cache-Control', 'no-store');
            res.send('<!doctype html><title>Account</title><p>Your account.</p>');
          }, next);
        });
      },
    });
    apps.push(app);
    const [account, payees] = app.auditOptions.stepUp ?? [];
    const close = { path: '/close', scope: 'account_closing', maxAge: 600 };
    const audit = (stepUp: NonNullable<typeof app.auditOptions.stepUp>) =>
      auditIntegration({
        ...app.auditOptions,
        // The actions without a step-up of their own (close_account's would hold an account_closing grant).
        actions: app.auditOptions.actions.slice(0, 2),
        stepUp,
        only: ['step-up.bound'],
      });
    // The flaw is real: with /close listed first, its grant is tried against /account, which opens.
    const first = await audit([close, account!, payees!]);
    expect(failedIds(first), formatAuditTable(first)).toEqual(['step-up.bound']);
    // Listed last, it is granted and tried all the same.
    const last = await audit([account!, payees!, close]);
    expect(failedIds(last), formatAuditTable(last)).toEqual(['step-up.bound']);
  }, 180_000);
});
