/**
 * limits.forwarded-ip fails an app that takes the client's address from CF-Connecting-IP or
 * True-Client-IP (as behind a CDN): the check sent a new address in X-Forwarded-For, Forwarded and
 * X-Real-IP only, so such an app, whose per-IP budget a client escapes, passed.
 */
import type { NextFunction, Request, Response } from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

describe.concurrent("an app taking the client's IP from a CDN's header", () => {
  for (const header of ['cf-connecting-ip', 'true-client-ip']) {
    it(`(${header}) fails limits.forwarded-ip`, async () => {
      const app = await startSampleApp({
        before: (app) => {
          // "Behind Cloudflare req.ip is Cloudflare's: take the visitor's from its header."
          app.use((req: Request, _res: Response, next: NextFunction) => {
            const value = req.headers[header];
            if (typeof value === 'string') Object.defineProperty(req, 'ip', { value, configurable: true });
            next();
          });
        },
      });
      apps.push(app);
      const report = await auditIntegration({ ...app.auditOptions, only: ['limits.forwarded-ip'] });
      expect(failedIds(report), formatAuditTable(report)).toEqual(['limits.forwarded-ip']);
    }, 120_000);
  }
});
