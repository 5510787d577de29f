/**
 * An effect made a moment after the sweep (its onOutcome queues a "welcome back" job that applies
 * the action again) is an effect all the same. sweep.never-returns counted each swept attempt's
 * effects right after the two sweeps only, and passed an app that applies every swept attempt a
 * second time 300 ms later: each attempt it swept is counted again once the run is over.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp, type SampleContext } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

describe('an app whose job applies a swept attempt again, 300 ms after the sweep', () => {
  it('fails sweep.never-returns, naming the later count', async () => {
    let ctx: SampleContext | undefined;
    const app = await startSampleApp({
      before: (_server, context) => {
        ctx = context;
      },
      onOutcome: (event) => {
        if (event.source !== 'sweep' || event.outcome !== 'fulfilled') return;
        // "The user never came back: a job finishes what the success page would have done."
        setTimeout(() => ctx?.insert(event.sessionId, event.userRef), 300);
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['sweep.never-returns'] });
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toEqual(['sweep.never-returns']);
    expect(table).toMatch(
      /grant: the attempt swept twice: by the end of the run the action had run 2 time\(s\) for it \(expected 1/,
    );
  }, 120_000);

  it('the sample app passes the same check', async () => {
    const app = await startSampleApp();
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['sweep.never-returns'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual([]);
  }, 120_000);
});
