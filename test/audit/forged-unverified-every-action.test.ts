/**
 * A landing that acts on arrival for one action only ("closing an account takes effect as soon as
 * the user is back") runs it for a pending or a failed attempt all the same. forged.unverified
 * landed the first action of `actions` only, and passed such an app.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

describe('a landing that runs close_account on arrival', () => {
  it('fails forged.unverified, naming the action', async () => {
    const app = await startSampleApp({
      landing: (ctx) => async (req, _res, next) => {
        const { state, session_id: sessionId } = req.query;
        if (typeof state === 'string' && typeof sessionId === 'string') {
          const attempt = await ctx.kit.store.findAttemptByState(state);
          if (attempt?.sessionId === sessionId && attempt.action === 'close_account' && ctx.grants(sessionId) === 0)
            ctx.insert(sessionId, attempt.userRef);
        }
        next();
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['forged.unverified'] });
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toEqual(['forged.unverified']);
    expect(table).toMatch(/close_account: after the pending attempt landed/);
  }, 120_000);
});
