/**
 * A CDN reads its own caching header before Cache-Control (CDN-Cache-Control, RFC 9213; the
 * Surrogate-Control of Fastly and Akamai; Cloudflare's and Vercel's own): a handoff page saying
 * Cache-Control: no-store to browsers and `CDN-Cache-Control: max-age=60` to the CDN is kept and
 * served to the next visitor. headers.kit-pages read Cache-Control alone and passed it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Response } from 'express';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

/** Every answer of the app with this header besides its own Cache-Control. */
function withHeader(name: string, value: string) {
  return startSampleApp({
    before: (app) => {
      app.use((_req, res: Response, next) => {
        const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => Response;
        res.writeHead = ((...args: unknown[]) => {
          res.setHeader(name, value);
          return writeHead(...args);
        }) as Response['writeHead'];
        next();
      });
    },
  });
}

const only = ['headers.kit-pages'];

describe("a CDN's own caching header on the kit's pages", () => {
  for (const [name, value] of [
    ['CDN-Cache-Control', 'max-age=60'],
    ['Surrogate-Control', 'max-age=3600'],
    ['Cloudflare-CDN-Cache-Control', 'public, max-age=60'],
  ] as const) {
    it(`${name}: ${value} fails headers.kit-pages, naming the header`, async () => {
      const app = await withHeader(name, value);
      apps.push(app);
      const report = await auditIntegration({ ...app.auditOptions, only });
      const table = formatAuditTable(report);
      expect(failedIds(report), table).toEqual(['headers.kit-pages']);
      expect(table).toContain(`POST /verify/start 200 lets a CDN keep it (${name.toLowerCase()}: ${value})`);
    }, 120_000);
  }

  for (const [name, value] of [
    ['CDN-Cache-Control', 'no-store'],
    ['Surrogate-Control', 'no-store'],
    ['CDN-Cache-Control', 'private'],
  ] as const) {
    it(`${name}: ${value} passes`, async () => {
      const app = await withHeader(name, value);
      apps.push(app);
      const report = await auditIntegration({ ...app.auditOptions, only });
      const table = formatAuditTable(report);
      expect(failedIds(report), table).toEqual([]);
    }, 120_000);
  }
});
