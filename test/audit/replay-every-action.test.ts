/**
 * A landing with code of its own for one action only: close_account's effect written as the
 * landing sends the user to the success page (every replay and every landing of a reload storm
 * writes it again), or a "closing in progress" page naming the account's owner to whoever opens
 * the link. The replay checks landed the first action of `actions` only, and passed such apps.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

describe('a landing with code of its own for close_account', () => {
  it('writing the effect on the way to the success page fails replay.after-success and replay.storm', async () => {
    const app = await startSampleApp({
      noFulfilEffectFor: ['close_account'],
      landing: (ctx) => async (req, res, next) => {
        const sessionId = typeof req.query.session_id === 'string' ? req.query.session_id : '';
        const attempt = await ctx.kit.store.findAttemptBySessionId(sessionId);
        if (attempt?.action === 'close_account') {
          const location = res.location.bind(res);
          res.location = (path: string) => {
            if (path.startsWith('/done')) ctx.insert(attempt.sessionId, attempt.userRef);
            return location(path);
          };
        }
        next();
      },
    });
    apps.push(app);
    const checks = ['replay.after-success', 'replay.storm'];
    const report = await auditIntegration({ ...app.auditOptions, only: checks });
    const table = formatAuditTable(report);
    expect(failedIds(report).sort(), table).toEqual(checks);
    expect(table).toMatch(/close_account: the action ran \d+ times/);
  }, 120_000);

  it("showing the owner's name to another browser fails replay.other-browser", async () => {
    const app = await startSampleApp({
      landing: (ctx) => async (req, res, next) => {
        const sessionId = typeof req.query.session_id === 'string' ? req.query.session_id : '';
        const attempt = await ctx.kit.store.findAttemptBySessionId(sessionId);
        const owner = attempt?.userRef.replace(/^user-/, '');
        const user = (req.session as { user?: string } | undefined)?.user;
        if (attempt?.action === 'close_account' && user !== owner) {
          res.status(409).send(`<!doctype html><p>The account of ${owner} is being closed.</p>`);
          return;
        }
        next();
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['replay.other-browser'] });
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toEqual(['replay.other-browser']);
    expect(table).toMatch(/close_account: another user's browser was shown its owner's name/);
  }, 120_000);
});
