/**
 * redirect.landing lands a return that fails too, not only a verified one: an attempt the service
 * failed, and the return with a state no attempt has (the planted value itself), each with the
 * planted parameters and headers. It passed an app that sends a failed verification "back where
 * the user was" (its ?next=), one that sends a stale or tampered return back to its ?returnTo=,
 * and one that redirects to a state it did not issue; each now fails. The sound sample app, whose
 * failed and unknown returns get the kit's own pages, passes.
 */
import type { Response } from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

/** Answers a redirect to `location` in place of whatever page the kit answers (not its own redirects). */
function redirectInsteadOfPage(res: Response, location: string): void {
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  res.end = ((...args: unknown[]) => {
    if (res.statusCode >= 300 && res.statusCode < 400) return end(...args);
    res.statusCode = 303;
    res.setHeader('Location', location);
    res.removeHeader('Content-Length');
    res.removeHeader('Content-Type');
    return end();
  }) as Response['end'];
}

/** Whether the app issued `state` (the kit's store has an attempt with it). */
async function issued(app: { kit: SampleApp['kit'] }, state: unknown): Promise<boolean> {
  return typeof state === 'string' && (await app.kit.store.findAttemptByState(state)) !== undefined;
}

describe.concurrent('a landing that fails', () => {
  it('sent back to its ?next= (in place of the failure page) fails redirect.landing', async () => {
    const app = await startSampleApp({
      // "The kit's failure page is a dead end: back to where the user was, to try again."
      landing: () => (req, res, next) => {
        if (typeof req.query.next === 'string') redirectInsteadOfPage(res, req.query.next);
        next();
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['redirect.landing'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual(['redirect.landing']);
  }, 180_000);

  it('with a state the app did not issue, sent back to its ?returnTo=, fails redirect.landing', async () => {
    const app = await startSampleApp({
      // "A stale or tampered link: back to where the user was."
      landing: (ctx) => async (req, res, next) => {
        if (!(await issued(ctx, req.query.state)) && typeof req.query.returnTo === 'string') {
          res.redirect(req.query.returnTo);
          return;
        }
        next();
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['redirect.landing'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual(['redirect.landing']);
  }, 180_000);

  it('with a state the app did not issue, sent on to that state, fails redirect.landing', async () => {
    const app = await startSampleApp({
      // "Our old sign-in flow carried the page to return to in state."
      landing: (ctx) => async (req, res, next) => {
        const { state } = req.query;
        if (!(await issued(ctx, state)) && typeof state === 'string' && /^(?:https?:)?\/\//.test(state)) {
          res.redirect(state);
          return;
        }
        next();
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['redirect.landing'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual(['redirect.landing']);
  }, 180_000);

  it("control: the sound sample app, showing the kit's own failure pages, passes redirect.landing", async () => {
    const app = await startSampleApp();
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['redirect.landing'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual([]);
  }, 180_000);
});
