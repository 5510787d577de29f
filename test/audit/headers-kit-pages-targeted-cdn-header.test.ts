/**
 * headers.kit-pages fails an app whose kit pages tell a CDN to keep them through any CDN's own
 * targeted header (`<cdn>-CDN-Cache-Control`, as RFC 9213 names them), not only the ones it lists:
 * Netlify's `Netlify-CDN-Cache-Control: public, durable, max-age=60` on the landing GET (a 303
 * setting the session's cookie) is kept at the edge and replayed to whoever asks for that URL next.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Response } from 'express';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

/** Every answer of the app with this header besides its own Cache-Control (as the existing fixture does). */
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

describe("a CDN's own caching header the audit does not know, on the kit's pages", () => {
  for (const [name, value] of [['Netlify-CDN-Cache-Control', 'public, durable, max-age=60']] as const) {
    it(`${name}: ${value} fails headers.kit-pages`, async () => {
      const app = await withHeader(name, value);
      apps.push(app);
      const report = await auditIntegration({ ...app.auditOptions, only: ['headers.kit-pages'] });
      const table = formatAuditTable(report);
      expect(failedIds(report), table).toContain('headers.kit-pages');
    }, 120_000);
  }
});
