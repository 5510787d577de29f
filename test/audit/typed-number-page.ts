/**
 * The sample app audited by entered.number-masked alone, its success page answering with what
 * `page` makes of the number the browser typed last: how each spelling, script or markup of a
 * typed number is put before the check.
 */
import express, { type Request } from 'express';
import { afterAll } from 'vitest';
import { auditIntegration, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

/** The page's answer: a redirect to `location`, `html`, or a `body` of bytes in the `charset` it names. */
export type TypedNumberPage = (
  typed: string,
  req: Request,
) => { location?: string; html?: string; body?: Buffer; charset?: string };

/** Starts such apps for one test file, each closed after it. */
export function typedNumberPages(): (page: TypedNumberPage) => Promise<{
  check: Awaited<ReturnType<typeof auditIntegration>>['checks'][number] | undefined;
  table: string;
}> {
  const apps: SampleApp[] = [];
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
  });
  return async (page) => {
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
        else if (answer.body !== undefined)
          res.setHeader('Content-Type', `text/html; charset=${answer.charset ?? 'utf-8'}`).end(answer.body);
        else res.send(answer.html ?? '');
        return true;
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['entered.number-masked'] });
    return { check: report.checks.find((c) => c.id === 'entered.number-masked'), table: formatAuditTable(report) };
  };
}
