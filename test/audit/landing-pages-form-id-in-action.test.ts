/**
 * landing.pages fails a success page whose form carries the attempt in its own address
 * (`<form method=post action="/claim/ses_…">`, no fields, submitted by a script) and grants any
 * attempt it names: only forms carrying the id in a field were sent again, so such a form passed.
 */
import express from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

describe('a success page whose form claims the attempt named in its action URL', () => {
  it('fails landing.pages: the form sent for another attempt runs the action for it', async () => {
    const app = await startSampleApp({
      before: (app, ctx) => {
        app.post('/claim/:id', express.urlencoded({ extended: false }), async (req, res, next) => {
          try {
            const attempt = await ctx.kit.store.findAttemptBySessionId(req.params.id ?? '');
            if (attempt !== undefined && ctx.grants(attempt.sessionId) === 0)
              ctx.insert(attempt.sessionId, attempt.userRef);
            res.setHeader('Cache-Control', 'no-store');
            res.send('<!doctype html><title>Thanks</title><p>Thanks.</p>');
          } catch (error) {
            next(error);
          }
        });
      },
      done: (req, res, ctx) => {
        const landed = ctx.kit.attempts.takeLanded(req);
        if (landed === undefined) return false;
        res.setHeader('Cache-Control', 'no-store');
        res.send(
          `<!doctype html><title>Done</title><form id="claim" method="post" action="/claim/${encodeURIComponent(landed.sessionId)}"><button>Continue</button></form><script>document.getElementById('claim').submit()</script>`,
        );
        return true;
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['landing.pages'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual(['landing.pages']);
  }, 120_000);
});
