/**
 * step-up.redirect fails a guarded form's handler that redirects to a URL in the form's own fields
 * under any name redirect.start plants (`returnUrl` here): only six names were planted in the form
 * (every name in the query), so a handler reading `returnUrl` from the body passed. A form whose
 * parser refuses that many fields gets the six most used alone.
 */
import express from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

describe("a guarded form's handler redirecting to the form's returnUrl field", () => {
  it('fails step-up.redirect', async () => {
    const app = await startSampleApp({
      before: (app) => {
        app.post('/payees', express.urlencoded({ extended: false }), (req, res, next) => {
          // The handler's own `res.redirect(303, '/payees')` goes back where the form said instead.
          const redirect = res.redirect.bind(res) as (...args: unknown[]) => void;
          res.redirect = ((...args: unknown[]) => {
            const back = (req.body as { returnUrl?: unknown } | undefined)?.returnUrl;
            if (typeof back === 'string' && args[args.length - 1] === '/payees') return redirect(303, back);
            return redirect(...args);
          }) as typeof res.redirect;
          next();
        });
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['step-up.redirect'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual(['step-up.redirect']);
  }, 120_000);

  it('(the same handler fails once its field is named next: the wrapper is live)', async () => {
    const app = await startSampleApp({
      before: (app) => {
        app.post('/payees', express.urlencoded({ extended: false }), (req, res, next) => {
          const redirect = res.redirect.bind(res) as (...args: unknown[]) => void;
          res.redirect = ((...args: unknown[]) => {
            const back = (req.body as { next?: unknown } | undefined)?.next;
            if (typeof back === 'string' && args[args.length - 1] === '/payees') return redirect(303, back);
            return redirect(...args);
          }) as typeof res.redirect;
          next();
        });
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['step-up.redirect'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual(['step-up.redirect']);
  }, 120_000);
});
