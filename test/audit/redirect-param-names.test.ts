/**
 * redirect.start plants its URLs under the names apps and frameworks read a "where next" from:
 * `next`, and `callbackUrl` (Auth.js), `redirectTo` (Supabase, Remix) and `ReturnUrl` (ASP.NET;
 * Express's query is case-sensitive, so `returnUrl` is not it) among them. An app that remembers one
 * at the start and sends the user there after the landing is an open redirect, and fails.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

describe.concurrent('a "where next" remembered at the start under a name frameworks use', () => {
  for (const name of ['next', 'callbackUrl', 'redirectTo', 'ReturnUrl']) {
    it(`?${name}= kept at the start and redirected to after the landing fails redirect.start`, async () => {
      const app = await startSampleApp({
        before: (express) => {
          express.post('/verify/start', (req, _res, next) => {
            const wanted = req.query[name];
            if (typeof wanted === 'string') (req.session as { next?: string }).next = wanted;
            next();
          });
        },
        done: (req, res) => {
          const remembered = (req.session as { next?: string }).next;
          if (remembered === undefined) return false;
          delete (req.session as { next?: string }).next;
          res.redirect(remembered);
          return true;
        },
      });
      apps.push(app);
      const report = await auditIntegration({ ...app.auditOptions, only: ['redirect.start'] });
      expect(failedIds(report), formatAuditTable(report)).toEqual(['redirect.start']);
    }, 180_000);
  }
});
