/**
 * entered.number-masked finds a typed number in full written in the digits of another script, as
 * the kit reads them and the report masks them: a success page of an Arabic site showing it in
 * Arabic-Indic digits, or a Japanese one in full-width digits, shows the number in full.
 */
import express, { type Request } from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

/** The sample app whose success page answers with `page(the number the browser typed last)`. */
async function audited(page: (typed: string, req: Request) => { location?: string; html?: string }) {
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
      if (phone === undefined || req.query.shown !== undefined) return false;
      const answer = page(phone, req);
      res.setHeader('Cache-Control', 'no-store');
      if (answer.location !== undefined) res.redirect(303, answer.location);
      else res.send(answer.html ?? '');
      return true;
    },
  });
  apps.push(app);
  const report = await auditIntegration({ ...app.auditOptions, only: ['entered.number-masked'] });
  return { check: report.checks.find((c) => c.id === 'entered.number-masked'), table: formatAuditTable(report) };
}

describe('entered.number-masked and a typed number in the digits of another script', () => {
  /** `phone` with its digits written from `zero` on (U+0660 Arabic-Indic, U+FF10 full-width). */
  const inScript = (phone: string, zero: number) =>
    phone.replace(/\d/g, (digit) => String.fromCodePoint(zero + Number(digit)));

  it('fails a success page showing the number in Arabic-Indic digits', async () => {
    const { check, table } = await audited((phone) => ({
      html: `<!doctype html><html lang="ar"><title>Done</title><p>رقمك الآن ${inScript(phone, 0x660)}</p>`,
    }));
    expect(check?.status, table).toBe('fail');
    expect(check?.evidence.join('\n')).toMatch(/a typed number in full in GET \/done response body/);
  }, 120_000);

  it('fails a success page showing the number in full-width digits', async () => {
    const { check, table } = await audited((phone) => ({
      html: `<!doctype html><html lang="ja"><title>Done</title><p>電話番号: ${inScript(phone, 0xff10)}</p>`,
    }));
    expect(check?.status, table).toBe('fail');
    expect(check?.evidence.join('\n')).toMatch(/a typed number in full in GET \/done response body/);
  }, 120_000);
});
