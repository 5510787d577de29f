/**
 * A success page that submits a form of its own carrying the attempt's session id (a script posts
 * it to /claim "so a reload does not run it again"), where /claim grants whatever attempt the id
 * names, runs the action for any attempt an attacker names. landing.pages requested the pages a
 * landing redirects to, never the forms they submit, and passed it.
 */
import express from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

describe('a success page whose form claims the attempt by its session id', () => {
  it('fails landing.pages: the form sent with another attempt id runs the action for it', async () => {
    const app = await startSampleApp({
      before: (app, ctx) => {
        app.post('/claim', express.urlencoded({ extended: false }), async (req, res) => {
          const id = (req.body as { session_id?: unknown }).session_id;
          const attempt = typeof id === 'string' ? await ctx.kit.store.findAttemptBySessionId(id) : undefined;
          if (attempt !== undefined && ctx.grants(attempt.sessionId) === 0)
            ctx.insert(attempt.sessionId, attempt.userRef);
          res.setHeader('Cache-Control', 'no-store');
          res.send('<!doctype html><title>Thanks</title><p>Thanks.</p>');
        });
      },
      done: (req, res, ctx) => {
        const landed = ctx.kit.attempts.takeLanded(req);
        if (landed === undefined) return false;
        res.setHeader('Cache-Control', 'no-store');
        res.send(
          `<!doctype html><title>Done</title><form id="claim" method="post" action="/claim"><input type="hidden" name="session_id" value="${landed.sessionId}"><button>Continue</button></form><script>document.getElementById('claim').submit()</script>`,
        );
        return true;
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['landing.pages'] });
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toEqual(['landing.pages']);
    expect(table).toMatch(/the pending attempt has 1 effect\(s\)/);
  }, 120_000);
});
