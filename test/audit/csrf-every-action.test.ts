/**
 * The start's defences hold for every action, not only the first of `actions`: an app that fills
 * in the missing token for one action ("the mobile screen for a new number has no token") or lets
 * one action through from another site starts a verification on any site's form. csrf.no-token,
 * csrf.cross-site and csrf.foreign-origin posted the first action only, and passed such an app.
 */
import express from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

const only = ['csrf.no-token', 'csrf.cross-site', 'csrf.foreign-origin'];

describe('a start defence skipped for the second action only', () => {
  it('a token filled in for change_phone fails csrf.no-token', async () => {
    const app = await startSampleApp({
      before: (app, ctx) => {
        app.post('/verify/start', express.urlencoded({ extended: false }), (req, _res, next) => {
          const body = req.body as Record<string, string>;
          if (body.action === 'change_phone') body._csrf ??= ctx.kit.csrfToken(req);
          next();
        });
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only });
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toEqual(['csrf.no-token']);
    expect(table).toMatch(/change_phone: a start without _csrf/);
  }, 120_000);

  it("another site's post let through for change_phone fails csrf.cross-site and csrf.foreign-origin", async () => {
    const app = await startSampleApp({
      before: (app) => {
        app.post('/verify/start', express.urlencoded({ extended: false }), (req, _res, next) => {
          if ((req.body as Record<string, string>).action === 'change_phone') {
            delete req.headers.origin;
            delete req.headers['sec-fetch-site'];
          }
          next();
        });
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only });
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toEqual(['csrf.cross-site', 'csrf.foreign-origin']);
  }, 120_000);

  it('the sample app passes all three for every action', async () => {
    const app = await startSampleApp();
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only });
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toEqual([]);
    expect(table).toMatch(/3 passed/);
  }, 120_000);
});
