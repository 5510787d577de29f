/**
 * redirect.landing fails a landing page whose script reads its own query through a location taken
 * apart (`const { search } = window.location`) and sends the browser on to its ?next=: run in a
 * browser at a URL carrying a planted value it goes there, exactly as the page reading
 * `new URLSearchParams(location.search).get('next')` does, which fails the check too.
 */
import type { NextFunction, Request, Response } from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

/** A landing with more than the service's parameters shows a page running `script`. */
const landingPage =
  (script: string) =>
  () =>
  (req: Request, res: Response, next: NextFunction): void => {
    const extra = Object.keys(req.query).some((name) => name !== 'session_id' && name !== 'state');
    if (!extra) return next();
    res.setHeader('Cache-Control', 'no-store');
    res.send(`<!doctype html><title>Taking you back</title><script>${script}</script><p>One moment.</p>`);
  };

async function audit(script: string) {
  const app = await startSampleApp({ landing: landingPage(script) });
  apps.push(app);
  const report = await auditIntegration({ ...app.auditOptions, only: ['redirect.landing'] });
  return { failed: failedIds(report), table: formatAuditTable(report) };
}

describe('a landing page whose script destructures location to read its ?next=', () => {
  it('const { search } = location; location.assign(new URLSearchParams(search).get("next")) fails redirect.landing', async () => {
    const { failed, table } = await audit(
      "const { search } = window.location; const to = new URLSearchParams(search).get('next'); if (to) window.location.assign(to);",
    );
    expect(failed, table).toEqual(['redirect.landing']);
  }, 180_000);

  it('(control: the same page reading location.search fails it)', async () => {
    const { failed, table } = await audit(
      "const to = new URLSearchParams(window.location.search).get('next'); if (to) window.location.assign(to);",
    );
    expect(failed, table).toEqual(['redirect.landing']);
  }, 180_000);
});
