/**
 * A text sent after the answer is a text all the same. Here a GET of a guarded page "pre-sends the
 * code so it is waiting when the user clicks": the page answers the guard's "Confirm it's you"
 * page unchanged, and a fire-and-forget job presses its button (POSTs the start with the user's
 * cookie) 150 ms later. step-up.get-never-texts must read the SMS sent again once its requests
 * have settled, before the next check texts, and fail when the count grew.
 */
import type { NextFunction, Request, Response } from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
});

/** Presses the guard's button for the user in the background, after the page was sent as it is. */
function presendInBackground(url: string) {
  return (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    res.end = ((...args: unknown[]) => {
      const [chunk] = args;
      const body = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : '';
      const intent = /name="intent" value="([^"]*)"/.exec(body)?.[1];
      const csrf = /name="_csrf" value="([^"]*)"/.exec(body)?.[1];
      if (intent !== undefined && csrf !== undefined) {
        setTimeout(() => {
          fetch(`${url.replace('localhost', '127.0.0.1')}/verify/start`, {
            method: 'POST',
            headers: {
              cookie: req.headers.cookie ?? '',
              'content-type': 'application/x-www-form-urlencoded',
              origin: url,
              'sec-fetch-site': 'same-origin',
            },
            body: new URLSearchParams({ _csrf: csrf, action: 'see_account', intent }).toString(),
          }).catch(() => {});
        }, 150);
      }
      return end(...args);
    }) as Response['end'];
    next();
  };
}

describe('a guarded page whose GET presses "Confirm it\'s you" in the background, 150 ms after its answer', () => {
  it('fails step-up.get-never-texts, naming the later count', async () => {
    const app = await startSampleApp({ before: (a, ctx) => a.use('/account', presendInBackground(ctx.url)) });
    apps.push(app);
    const before = await app.emulator.control.stats();
    const report = await auditIntegration({ ...app.auditOptions, only: ['step-up.get-never-texts'] });
    const table = formatAuditTable(report);
    await new Promise((r) => setTimeout(r, 1000));
    const after = await app.emulator.control.stats();
    // The flaw is real: the GETs of the check created sessions and texted.
    expect(after.smsSent - before.smsSent, 'SMS sent by the GETs').toBeGreaterThan(0);
    expect(failedIds(report), table).toEqual(['step-up.get-never-texts']);
    expect(table).toMatch(/the requests of guarded pages without a grant: \d+ SMS more were sent after their answers/);
  }, 120_000);

  it('the sample app passes step-up.get-never-texts', async () => {
    const app = await startSampleApp();
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['step-up.get-never-texts'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual([]);
  }, 120_000);
});
