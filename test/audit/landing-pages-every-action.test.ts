/**
 * Each action has its own success page (its successPath): a "just in case" grant on the page of
 * one action but the first of `actions` is a grant all the same. landing.pages landed the first
 * action only, and passed an app whose change_phone success page grants the attempt its URL names.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

describe("a success page granting by its URL's session id, for the second action only", () => {
  it('fails landing.pages', async () => {
    const app = await startSampleApp({
      before: (express, ctx) => {
        express.get('/phone-done', async (req, res) => {
          const id = req.query.session_id;
          // "Just in case the landing missed it."
          const attempt = typeof id === 'string' ? await ctx.kit.store.findAttemptBySessionId(id) : undefined;
          if (attempt !== undefined && ctx.grants(attempt.sessionId) === 0)
            ctx.insert(attempt.sessionId, attempt.userRef);
          res.setHeader('Cache-Control', 'no-store');
          res.send('<!doctype html><title>Number changed</title><p>Done.</p>');
        });
      },
      done: (req, res, ctx) => {
        const landed = ctx.kit.attempts.takeLanded(req);
        if (landed?.action !== 'change_phone') return false;
        res.redirect(`/phone-done?session_id=${encodeURIComponent(landed.sessionId)}`);
        return true;
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['landing.pages'] });
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toEqual(['landing.pages']);
    expect(table).toMatch(/change_phone: the pending attempt has 1 effect\(s\)/);
  }, 120_000);
});
