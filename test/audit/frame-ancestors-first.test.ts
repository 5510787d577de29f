/**
 * A policy naming frame-ancestors twice is enforced with its first one, the later ignored (CSP 3,
 * "parse a serialized CSP": a duplicate directive is dropped). headers.kit-pages read any of them,
 * and passed `frame-ancestors *; frame-ancestors 'none'` (a middleware appending its own
 * directive to the app's policy), which every site may frame.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Response } from 'express';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

/** Every page with exactly this policy, and no X-Frame-Options. */
function withPolicy(policy: string) {
  return startSampleApp({
    before: (app) => {
      app.use((_req, res: Response, next) => {
        const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => Response;
        res.writeHead = ((...args: unknown[]) => {
          res.removeHeader('X-Frame-Options');
          res.setHeader('Content-Security-Policy', policy);
          return writeHead(...args);
        }) as Response['writeHead'];
        next();
      });
    },
  });
}

const only = ['headers.kit-pages'];

describe('frame-ancestors named twice in one policy', () => {
  it("frame-ancestors *; frame-ancestors 'none' may be framed: headers.kit-pages fails", async () => {
    const app = await withPolicy("default-src 'self'; frame-ancestors *; frame-ancestors 'none'");
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only });
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toEqual(['headers.kit-pages']);
    expect(table).toContain('may be framed (no X-Frame-Options, frame-ancestors *)');
  }, 120_000);

  it("frame-ancestors 'none'; frame-ancestors * refuses framing: headers.kit-pages passes", async () => {
    const app = await withPolicy("default-src 'self'; frame-ancestors 'none'; frame-ancestors *");
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only });
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toEqual([]);
  }, 120_000);
});
