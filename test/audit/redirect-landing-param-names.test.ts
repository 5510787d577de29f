/**
 * The redirect checks plant their URLs under the names link redirectors and sign-in flows read a
 * "where next" from, beyond `next` and its kin: `to` and `go` (`/out?to=`), `redirectUri` (MSAL,
 * Keycloak's adapters), `forward`, `location`, SAML's `RelayState`, `redir`, `return_path` and
 * Redmine's `back_url`. A landing that redirects to any of them fails redirect.landing, and a start
 * that remembers `?to=` for after the landing fails redirect.start; both passed with the shorter list.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

const NAMES = ['to', 'go', 'redirectUri', 'forward', 'location', 'RelayState', 'redir', 'return_path', 'back_url'];

type WithNext = { next?: string };

describe.concurrent('a landing that redirects to a parameter named as a link redirector names it', () => {
  for (const name of NAMES) {
    it(`?${name}= on the landing fails redirect.landing`, async () => {
      const app = await startSampleApp({
        landing: () => (req, res, next) => {
          const wanted = req.query[name];
          if (typeof wanted === 'string') {
            const location = res.location.bind(res);
            res.location = () => location(wanted);
          }
          next();
        },
      });
      apps.push(app);
      const report = await auditIntegration({ ...app.auditOptions, only: ['redirect.landing'] });
      expect(failedIds(report), formatAuditTable(report)).toEqual(['redirect.landing']);
    }, 180_000);
  }
});

describe('a "where next" remembered at the start under ?to=', () => {
  it('and redirected to after the landing fails redirect.start', async () => {
    const app = await startSampleApp({
      before: (express) => {
        express.post('/verify/start', (req, _res, next) => {
          if (typeof req.query.to === 'string') (req.session as WithNext).next = req.query.to;
          next();
        });
      },
      done: (req, res) => {
        const remembered = (req.session as WithNext).next;
        if (remembered === undefined) return false;
        delete (req.session as WithNext).next;
        res.redirect(remembered);
        return true;
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['redirect.start'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual(['redirect.start']);
  }, 180_000);
});
