/**
 * headers.kit-pages judges every answer of the kit's routes the run saw, not the start and the
 * landing alone: the kit's step-up page (GET /verify/step-up, the confirmation of a kept form,
 * with the user's kept request and its token), which step-up.intent-once requests, and the guard's
 * "Confirm it's you" page at a guarded route, which step-up.bound requests, fail it when the app's
 * CDN rule lets a CDN keep them.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

describe("headers.kit-pages judges each of the kit's pages the run saw", () => {
  it('fails a step-up confirmation page a CDN may keep for a minute', async () => {
    const kept: string[] = [];
    const app = await startSampleApp({
      before: (server) => {
        // "The CDN keeps our GET pages a minute; the kit's start and return are excluded."
        server.use((req, res, next) => {
          if (req.method === 'GET' && req.path !== '/verify/return') {
            res.setHeader('CDN-Cache-Control', 'max-age=60');
            if (req.path === '/verify/step-up') {
              res.on('finish', () => kept.push(`${res.statusCode} ${String(res.getHeader('cdn-cache-control'))}`));
            }
          }
          next();
        });
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['step-up.intent-once', 'headers.kit-pages'] });
    const table = formatAuditTable(report);
    // The step-up page was requested, and answered with the CDN's lifetime.
    expect(kept, table).toContain('200 max-age=60');
    expect(failedIds(report), table).toEqual(['headers.kit-pages']);
  }, 120_000);

  it('fails the guard\'s "Confirm it\'s you" page a CDN may keep for a minute', async () => {
    const app = await startSampleApp({
      before: (server) => {
        // "The account page is the same for a minute": the rule holds for the guard's answer there too.
        server.get('/account', (_req, res, next) => {
          res.setHeader('CDN-Cache-Control', 'max-age=60');
          next();
        });
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['step-up.bound', 'headers.kit-pages'] });
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toEqual(['headers.kit-pages']);
    expect(table).toMatch(/GET \/account \d+ lets a CDN keep it \(cdn-cache-control: max-age=60\)/);
  }, 120_000);
});
