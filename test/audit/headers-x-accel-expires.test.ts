/**
 * headers.kit-pages fails an app that tells its nginx cache to keep every answer for a minute with
 * `X-Accel-Expires: 60` (micro-caching everything at the proxy): nginx gives X-Accel-Expires
 * priority over Cache-Control and Expires, so the start's answer carrying the handoff would be
 * kept and served to the next visitor. `X-Accel-Expires: 0` keeps nothing and passes.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from '../audit/sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
});

describe('every answer carrying X-Accel-Expires: 60 (nginx micro-cache)', () => {
  it('fails headers.kit-pages', async () => {
    const app = await startSampleApp({
      before: (a) => {
        a.use((_req, res, next) => {
          res.setHeader('X-Accel-Expires', '60');
          next();
        });
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['headers.kit-pages'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual(['headers.kit-pages']);
  }, 120_000);

  it('X-Accel-Expires: 0 (nothing kept) passes headers.kit-pages', async () => {
    const app = await startSampleApp({
      before: (a) => {
        a.use((_req, res, next) => {
          res.setHeader('X-Accel-Expires', '0');
          next();
        });
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['headers.kit-pages'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual([]);
  }, 120_000);
});
