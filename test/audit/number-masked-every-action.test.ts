/**
 * An app with two actions that text a typed number, whose second one's success page shows the
 * number in full: entered.number-masked typed a number into the first of them only, and passed
 * such an app. It now types one into each.
 */
import express from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

describe('a second entered-number action showing the typed number in full', () => {
  it('fails entered.number-masked', async () => {
    const typed = new Map<string, string>();
    const app = await startSampleApp({
      secondEntered: 'add_backup_phone',
      before: (app) => {
        app.post('/verify/start', express.urlencoded({ extended: false }), (req, _res, next) => {
          const { phone, action } = req.body as { phone?: unknown; action?: unknown };
          if (typeof phone === 'string' && action === 'add_backup_phone') typed.set(req.sessionID, phone);
          next();
        });
      },
      done: (req, res) => {
        const phone = typed.get(req.sessionID);
        if (phone === undefined) return false;
        res.setHeader('Cache-Control', 'no-store');
        res.send(`<!doctype html><title>Done</title><p>Your backup number is now ${phone}.</p>`);
        return true;
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['entered.number-masked'] });
    const check = report.checks.find((c) => c.id === 'entered.number-masked');
    const table = formatAuditTable(report);
    expect(check?.status, table).toBe('fail');
    expect(check?.evidence.join('\n')).toMatch(/a typed number in full in GET \/done response body/);
  }, 120_000);
});
