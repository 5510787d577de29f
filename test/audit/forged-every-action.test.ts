/**
 * A landing with code of its own for one action only (a "lenient" close_account landing that fills
 * in the stored state for a known session_id, or "recovers" an unknown session_id as the user's
 * newest close_account attempt) runs that action for a forged landing. The forged checks landed the
 * first action of `actions` only, and passed such an app.
 */
import type { Request } from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp, type SampleContext } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

/** The signed-in user's newest close_account attempt. */
async function newestClosing(ctx: SampleContext, req: Request) {
  const user = (req.session as { user?: string } | undefined)?.user;
  if (user === undefined) return undefined;
  const attempts = await ctx.kit.store.listAttempts({ userRef: `user-${user}`, limit: 50 });
  return attempts.filter((a) => a.action === 'close_account').sort((a, b) => b.startSeq - a.startSeq)[0];
}

describe('a landing lenient for close_account only', () => {
  it('fails every forged check a lenient landing breaks, naming the action', async () => {
    const app = await startSampleApp({
      landing: (ctx) => async (req, _res, next) => {
        const sessionId = typeof req.query.session_id === 'string' ? req.query.session_id : undefined;
        if (sessionId !== undefined) {
          const known = await ctx.kit.store.findAttemptBySessionId(sessionId);
          const attempt = known ?? (await newestClosing(ctx, req));
          if (attempt?.action === 'close_account') {
            req.url = `${req.path}?session_id=${encodeURIComponent(attempt.sessionId)}&state=${encodeURIComponent(attempt.state)}`;
          }
        }
        next();
      },
    });
    apps.push(app);
    const checks = ['forged.unknown-session', 'forged.foreign-session', 'forged.wrong-state', 'forged.missing-state'];
    const report = await auditIntegration({ ...app.auditOptions, only: checks });
    const table = formatAuditTable(report);
    expect(failedIds(report).sort(), table).toEqual(checks.sort());
    expect(table).toMatch(/close_account: /);
  }, 120_000);
});
