/**
 * entered.no-swap fails an app that keeps a number from the landing's query under any name an app
 * reads one by (`phone_number`, `number`, ...), not `phone` alone: the check planted `&phone=` only,
 * so an app saving `?phone_number=` at its success page passed.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';
import { userNamed } from '../support/users.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

type Kept = { user?: string; deepLinked?: string };

describe.concurrent('a landing keeping the number its query names, under another name than phone', () => {
  for (const name of ['phone_number', 'number']) {
    it(`?${name}= kept at the landing and saved by the success page fails entered.no-swap`, async () => {
      const app = await startSampleApp({
        landing: () => (req, _res, next) => {
          // "The mobile app's deep link carries the new number."
          const named = req.query[name];
          if (typeof named === 'string') (req.session as Kept).deepLinked = named;
          next();
        },
        done: (req, _res, ctx) => {
          const kept = req.session as Kept;
          if (kept.deepLinked !== undefined && kept.user !== undefined) {
            ctx.savePhone(userNamed(kept.user).userRef, kept.deepLinked);
            delete kept.deepLinked;
          }
          return false;
        },
      });
      apps.push(app);
      const report = await auditIntegration({ ...app.auditOptions, only: ['entered.no-swap'] });
      expect(failedIds(report), formatAuditTable(report)).toEqual(['entered.no-swap']);
    }, 120_000);
  }

  it('(control: the same app reading ?phone= fails it)', async () => {
    const app = await startSampleApp({
      landing: () => (req, _res, next) => {
        const named = req.query.phone;
        if (typeof named === 'string') (req.session as Kept).deepLinked = named;
        next();
      },
      done: (req, _res, ctx) => {
        const kept = req.session as Kept;
        if (kept.deepLinked !== undefined && kept.user !== undefined) {
          ctx.savePhone(userNamed(kept.user).userRef, kept.deepLinked);
          delete kept.deepLinked;
        }
        return false;
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['entered.no-swap'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual(['entered.no-swap']);
  }, 120_000);
});
