/**
 * step-up.get-never-texts fails a guarded page that texts when the user clicks the app's own link
 * (Sec-Fetch-Site: same-origin, Sec-Fetch-Mode: navigate): the check's requests never looked like
 * that click, so a page texting only then passed.
 */
import type { NextFunction, Request, Response } from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

/** As the sample's pressForTheUser: when the guard answers "Confirm it's you", the app presses its button itself. */
function pressForTheUser(req: Request, res: Response, url: string): void {
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  res.end = ((...args: unknown[]) => {
    const [chunk] = args;
    const body = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : '';
    const intent = /name="intent" value="([^"]*)"/.exec(body)?.[1];
    const csrf = /name="_csrf" value="([^"]*)"/.exec(body)?.[1];
    if (intent === undefined || csrf === undefined) return end(...args);
    fetch(`${url.replace('localhost', '127.0.0.1')}/verify/start`, {
      method: 'POST',
      headers: {
        cookie: req.headers.cookie ?? '',
        'content-type': 'application/x-www-form-urlencoded',
        origin: url,
        'sec-fetch-site': 'same-origin',
      },
      body: new URLSearchParams({ _csrf: csrf, action: 'see_account', intent }).toString(),
    }).then(
      async (answer) => {
        const page = await answer.text();
        res.statusCode = answer.status;
        res.removeHeader('Content-Length');
        end(page);
      },
      () => end(...args),
    );
    return res;
  }) as Response['end'];
}

describe("a guarded page pressing the guard's button for a click on the app's own link", () => {
  it('fails step-up.get-never-texts', async () => {
    const app = await startSampleApp({
      before: (app, ctx) => {
        app.get('/account', (req: Request, res: Response, next: NextFunction) => {
          // "One click fewer, but only for our own links: never a prefetch, never another site."
          if (req.get('sec-fetch-site') === 'same-origin' && req.get('sec-fetch-mode') === 'navigate') {
            pressForTheUser(req, res, ctx.url);
          }
          next();
        });
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['step-up.get-never-texts'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual(['step-up.get-never-texts']);
  }, 120_000);

  it('(control: the same press for every GET fails it)', async () => {
    const app = await startSampleApp({
      before: (app, ctx) => {
        app.get('/account', (req: Request, res: Response, next: NextFunction) => {
          pressForTheUser(req, res, ctx.url);
          next();
        });
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['step-up.get-never-texts'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual(['step-up.get-never-texts']);
  }, 120_000);
});
