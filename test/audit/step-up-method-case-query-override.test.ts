/**
 * step-up.method-case fails an app whose hand-written method override reads `_method` from the
 * query (`?_method=get`, as the method-override package's `methodOverride('_method')` reads it) and
 * calls the guard only for methods it names in upper case: `GET /account?_method=get` opens the
 * guarded page without a grant. The same app reading `_method` from the form body fails it too.
 */
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { AuditAgent, auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type CustomFlaw, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
});

const UPPER_CASE_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** The account page, guarded only for the methods the app names in upper case, after a query override. */
function queryOverride(source: 'query' | 'body'): CustomFlaw {
  return {
    before: (app, ctx) => {
      const guard: RequestHandler = ctx.kit.requireRecentVerification({ scope: 'see_account', maxAge: 600 });
      app.use('/account', express.urlencoded({ extended: false }));
      app.use('/account', (req: Request, _res: Response, next: NextFunction) => {
        const holder = source === 'query' ? req.query : (req.body as Record<string, unknown> | undefined);
        const override = holder?._method;
        if (typeof override === 'string') req.method = override;
        next();
      });
      app.all(
        '/account',
        (req, res, next) => (UPPER_CASE_METHODS.includes(req.method) ? guard(req, res, next) : next()),
        (_req, res) => {
          res.setHeader('Cache-Control', 'no-store');
          res.send('<!doctype html><title>Account</title><p>Your account.</p>');
        },
      );
    },
  };
}

describe('a method override read from the query, the guard called for upper-case methods only', () => {
  it('fails step-up.method-case', async () => {
    const app = await startSampleApp(queryOverride('query'));
    apps.push(app);
    // The flaw is real: a signed-in user without any grant opens the guarded page.
    const agent = new AuditAgent(app.url, () => {});
    await agent.postForm('/login', { user: 'queryoverride' });
    const asked = await agent.request('/account');
    expect(asked.body).not.toContain('Your account.');
    const opened = await agent.request('/account?_method=get');
    expect(opened.body).toContain('Your account.');

    const report = await auditIntegration({ ...app.auditOptions, only: ['step-up.method-case'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual(['step-up.method-case']);
  }, 120_000);

  it('(control: the same app reading _method from the form body fails it)', async () => {
    const app = await startSampleApp(queryOverride('body'));
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['step-up.method-case'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual(['step-up.method-case']);
  }, 120_000);
});
