/**
 * An effect made a moment after the answer (the landing queues a job that grants, or a hook runs
 * after the response) is an effect all the same. The checks counted effects right after each
 * answer, and passed an app whose landing grants every arriving attempt, pending or failed, 50 ms
 * later. What must stay unrun is counted again once the run is over. landing.pages fails it too:
 * it lands the user's own pending and failed attempts before opening their pages again.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

describe('a landing that grants through a job, 50 ms after its answer', () => {
  it('fails forged.unverified (and landing.pages), naming the later count', async () => {
    const app = await startSampleApp({
      landing: (ctx) => async (req, _res, next) => {
        const { state, session_id: sessionId } = req.query;
        if (typeof state === 'string' && typeof sessionId === 'string') {
          const attempt = await ctx.kit.store.findAttemptByState(state);
          if (attempt?.sessionId === sessionId) {
            // "The job queue grants the upgrade."
            setTimeout(() => {
              if (ctx.grants(sessionId) === 0) ctx.insert(sessionId, attempt.userRef);
            }, 50);
          }
        }
        next();
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['forged.unverified', 'landing.pages'] });
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toEqual(['forged.unverified', 'landing.pages']);
    expect(table).toMatch(
      /after the pending attempt landed \(\[a session id ending \w+\]\): by the end of the run the action had run 1 time\(s\) for it \(expected 0/,
    );
  }, 120_000);

  it('the sample app passes the same checks', async () => {
    const app = await startSampleApp();
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['forged.unverified', 'landing.pages'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual([]);
  }, 120_000);
});
