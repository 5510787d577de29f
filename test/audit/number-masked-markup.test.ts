/**
 * entered.number-masked finds a typed number in full however a page's markup splits it: each group
 * in an element of its own (`<span>+44</span><span>7400</span><span>123456</span>`) shows the
 * number in full to the user all the same.
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

describe('entered.number-masked and a typed number split by markup', () => {
  it('fails a success page showing each group of the number in its own element', async () => {
    const { check, table } = await audited((phone) => ({
      html: `<!doctype html><title>Done</title><p>Your number is now ${phone
        .split(' ')
        .map((group) => `<span class="group">${group}</span>`)
        .join('')}</p>`,
    }));
    expect(check?.status, table).toBe('fail');
    expect(check?.evidence.join('\n')).toMatch(/a typed number in full in GET \/done response body/);
  }, 120_000);

  it('passes a success page showing the number masked, its last digits in an element', async () => {
    const { check, table } = await audited((phone) => ({
      html: `<!doctype html><title>Done</title><p>Your number is now •• <b>${phone.slice(-2)}</b></p>`,
    }));
    expect(check?.status, table).toBe('pass');
  }, 120_000);
});
