/**
 * entered.number-masked reads a page as a browser decodes it, in the charset its Content-Type
 * names: a success page served as UTF-16 showing the typed number in full shows it to its reader,
 * and fails as the same page in UTF-8 does.
 */
import express from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

async function audited(charset: 'utf-8' | 'utf-16le') {
  const typed = new Map<string, string>();
  const app = await startSampleApp({
    before: (app) => {
      app.post('/verify/start', express.urlencoded({ extended: false }), (req, _res, next) => {
        const { phone } = req.body as { phone?: unknown };
        if (typeof phone === 'string') typed.set(req.sessionID, phone);
        next();
      });
    },
    done: (req, res) => {
      const phone = typed.get(req.sessionID);
      if (phone === undefined) return false;
      const html = `\uFEFF<!doctype html><title>Done</title><p>Your number is now ${phone}</p>`;
      res.setHeader('Cache-Control', 'no-store');
      res.setHeader('Content-Type', `text/html; charset=${charset}`);
      res.end(Buffer.from(html, charset === 'utf-8' ? 'utf8' : 'utf16le'));
      return true;
    },
  });
  apps.push(app);
  const report = await auditIntegration({ ...app.auditOptions, only: ['entered.number-masked'] });
  return { check: report.checks.find((c) => c.id === 'entered.number-masked'), table: formatAuditTable(report) };
}

describe.concurrent('entered.number-masked and a page in UTF-16', () => {
  it('control: the page in UTF-8 fails', async () => {
    const { check, table } = await audited('utf-8');
    expect(check?.status, table).toBe('fail');
  }, 120_000);

  it('the same page in UTF-16 fails', async () => {
    const { check, table } = await audited('utf-16le');
    expect(check?.status, table).toBe('fail');
  }, 120_000);
});
