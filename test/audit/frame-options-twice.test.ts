/**
 * X-Frame-Options sent twice, as a browser reads it (HTML, "check a navigation response's adherence
 * to X-Frame-Options"): the values are a set; one value DENY or SAMEORIGIN refuses framing, and so
 * do several distinct values when one is DENY, SAMEORIGIN or ALLOWALL. headers.kit-pages took two
 * lines (joined "DENY, DENY") for no refusal, failing pages every browser refuses to frame.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Response } from 'express';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

/** Every page without its frame-ancestors policy, and with exactly these X-Frame-Options lines. */
function frameOptions(lines: string[]) {
  return startSampleApp({
    before: (app) => {
      app.use((_req, res: Response, next) => {
        const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => Response;
        res.writeHead = ((...args: unknown[]) => {
          res.removeHeader('Content-Security-Policy');
          res.setHeader('X-Frame-Options', lines);
          return writeHead(...args);
        }) as Response['writeHead'];
        next();
      });
    },
  });
}

const only = ['headers.kit-pages'];

describe('X-Frame-Options in two lines', () => {
  for (const lines of [
    ['DENY', 'DENY'],
    ['DENY', 'ALLOWALL'],
    ['SAMEORIGIN', 'sameorigin'],
  ]) {
    it(`${lines.join(' and ')} refuses framing: headers.kit-pages passes`, async () => {
      const app = await frameOptions(lines);
      apps.push(app);
      const report = await auditIntegration({ ...app.auditOptions, only });
      const table = formatAuditTable(report);
      expect(report.stopped, table).toBeUndefined();
      expect(failedIds(report), table).toEqual([]);
    }, 120_000);
  }

  for (const lines of [['ALLOWALL'], ['ALLOW-FROM https://evil.example', 'ALLOW-FROM https://evil.example']]) {
    it(`${lines.join(' and ')} lets any site frame the page: headers.kit-pages fails`, async () => {
      const app = await frameOptions(lines);
      apps.push(app);
      const report = await auditIntegration({ ...app.auditOptions, only });
      const table = formatAuditTable(report);
      expect(failedIds(report), table).toEqual(['headers.kit-pages']);
      // Said as sent: the header is there, refusing nothing.
      expect(table).toContain(`may be framed (X-Frame-Options: ${lines.join(', ')}, no frame-ancestors)`);
    }, 120_000);
  }
});
