/**
 * limits.burst passes only when the start limits answered the burst (429, the kit's refusal at a
 * budget): an app without start limits whose start route refuses a start while another of the
 * same browser is in flight (409, "a double-click guard") refuses some starts of a burst, yet any
 * number of starts made one after another each text the user.
 */
import express from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

/** The sample app without start limits, its start route answering 409 while the browser's previous start runs. */
async function doubleClickGuardedApp(): Promise<SampleApp> {
  const starting = new Set<string>();
  const app = await startSampleApp({
    noStartLimits: true,
    before: (app) => {
      app.post('/verify/start', express.urlencoded({ extended: false }), (req, res, next) => {
        const id = req.sessionID;
        if (starting.has(id)) {
          res.status(409).send('<!doctype html><title>Already starting</title><p>One moment.</p>');
          return;
        }
        starting.add(id);
        res.on('close', () => starting.delete(id));
        next();
      });
    },
  });
  apps.push(app);
  return app;
}

describe('limits.burst and starts refused by something other than the start limits', () => {
  it('fails an app without start limits whose route answers 409 to a start made while another runs', async () => {
    const app = await doubleClickGuardedApp();
    const report = await auditIntegration({ ...app.auditOptions, only: ['limits.burst'] });
    const check = report.checks.find((c) => c.id === 'limits.burst');
    const evidence = check?.evidence.join('\n') ?? '';
    expect(check?.status, evidence).toBe('fail');
    // Some starts were refused: by the guard (409), not by a budget.
    expect(evidence).toMatch(/answered 409/);
    expect(evidence).toMatch(/no start of \d+ was refused with 429/);
  }, 120_000);

  it('passes the sound sample app, whose start limits answer the burst with 429', async () => {
    const app = await startSampleApp();
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['limits.burst'] });
    expect(report.checks.find((c) => c.id === 'limits.burst')?.status, formatAuditTable(report)).toBe('pass');
  }, 120_000);
});
