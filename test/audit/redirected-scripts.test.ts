/**
 * A script or frame the page loads that answers with a redirect (a name without its hash, sent to
 * the hashed build) runs what it is redirected to, as a browser follows it: a redirected script
 * sending the browser on to the page's ?next= fails the redirect checks; a redirected sound script
 * does not.
 */
import type express from 'express';
import type { NextFunction, Request, Response } from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

/** A landing with more than the service's parameters shows `html` instead of the kit's landing. */
const landingPage =
  (html: string) =>
  () =>
  (req: Request, res: Response, next: NextFunction): void => {
    const extra = Object.keys(req.query).some((name) => name !== 'session_id' && name !== 'state');
    if (!extra) return next();
    res.setHeader('Cache-Control', 'no-store');
    res.send(`<!doctype html><title>Taking you back</title>${html}<p>One moment.</p>`);
  };

/** /assets/back.js redirects to /assets/back.5f3a.js, which holds `script`; /frame redirects to /frame.html whose page runs it. */
const hashedBuild = (script: string) => (app: express.Express) => {
  app.get('/assets/back.js', (_req, res) => res.redirect(302, '/assets/back.5f3a.js'));
  app.get('/assets/back.5f3a.js', (_req, res) => {
    res.type('application/javascript').send(script);
  });
  app.get('/frame', (_req, res) => res.redirect(301, '/frame.html'));
  app.get('/frame.html', (_req, res) => {
    res.send(`<!doctype html><title>Frame</title><script>${script}</script>`);
  });
};

async function audit(script: string, html: string) {
  const app = await startSampleApp({ before: hashedBuild(script), landing: landingPage(html) });
  apps.push(app);
  const report = await auditIntegration({ ...app.auditOptions, only: ['redirect.landing'] });
  return { failed: failedIds(report), table: formatAuditTable(report) };
}

const READS_NEXT = "const to = new URLSearchParams(parent.location.search).get('next'); if (to) top.location = to;";

describe('a script or a frame of the page that redirects', () => {
  it("a landing page loading /assets/back.js, redirected to a build sending the browser on to the page's ?next=, fails redirect.landing", async () => {
    const { failed, table } = await audit(READS_NEXT, '<script src="/assets/back.js"></script>');
    expect(failed, table).toEqual(['redirect.landing']);
    expect(table).toMatch(/the script \/assets\/back\.5f3a\.js the page loads reads a URL carrying a planted value/);
  }, 120_000);

  it("a landing page framing /frame, redirected to a page whose script sends the top window on to the parent's ?next=, fails redirect.landing", async () => {
    const { failed, table } = await audit(READS_NEXT, '<iframe src="/frame"></iframe>');
    expect(failed, table).toEqual(['redirect.landing']);
    expect(table).toMatch(/a <script> of the frame \/frame\.html the page loads reads a URL carrying a planted value/);
  }, 120_000);

  it('a landing page loading a redirected script that goes to a fixed page passes redirect.landing', async () => {
    const { failed, table } = await audit(
      "setTimeout(() => location.replace('/account'), 5000);",
      '<script src="/assets/back.js"></script><iframe src="/frame"></iframe>',
    );
    expect(failed, table).toEqual([]);
    expect(table).toMatch(/redirect\.landing\s+pass/i);
  }, 120_000);
});
