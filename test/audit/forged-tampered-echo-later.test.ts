/**
 * forged.tampered-echo fails an app that grants on the status alone a moment after the landing's
 * answer: the app keeps the kit's landing and fulfil, and adds a "reconciliation job" each landing
 * queues, which 100 ms later reads the session from the service and, when it says verified and no
 * grant exists, writes one, never comparing the echoed state or userRef with the stored attempt. A
 * tampered echo is refused by the kit, then granted by the job: the check counts such attempts
 * again at the end of the run (the kit's sweep refuses a tampered echo too, so none may run).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration } from 'hosted-sms-verify-kit/testing';
import { failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from '../audit/sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
});

/** Every grant the reconciliation job wrote: [sessionId, status it read]. */
const jobGrants: string[] = [];

async function reconcilingApp(): Promise<SampleApp> {
  let emulatorUrl = '';
  const app = await startSampleApp({
    landing: (ctx) => (req, _res, next) => {
      const sessionId = typeof req.query.session_id === 'string' ? req.query.session_id : undefined;
      if (sessionId !== undefined) {
        // "Reconcile: if the service says verified and the user has no grant yet, grant it."
        setTimeout(() => {
          void (async () => {
            const auth = Buffer.from(`${ctx.clientId}:${ctx.clientSecret}`).toString('base64');
            const res = await fetch(`${emulatorUrl}/session/${encodeURIComponent(sessionId)}`, {
              headers: { authorization: `Basic ${auth}` },
            });
            if (!res.ok) return;
            const body = (await res.json()) as { status?: string; userRef?: string };
            const attempt = await ctx.kit.store.findAttemptBySessionId(sessionId);
            if (body.status === 'verified' && attempt !== undefined && ctx.grants(sessionId) === 0) {
              ctx.insert(sessionId, attempt.userRef);
              jobGrants.push(sessionId);
            }
          })().catch(() => {});
        }, 100);
      }
      next();
    },
  });
  emulatorUrl = app.emulator.url;
  apps.push(app);
  return app;
}

describe('a landing that queues a status-only "reconcile" grant 100 ms after its answer', () => {
  it('fails forged.tampered-echo', async () => {
    const app = await reconcilingApp();
    const report = await auditIntegration({ ...app.auditOptions, only: ['forged.tampered-echo'] });
    const table = formatAuditTable(report);
    // Let the last queued jobs run: the flaw is real, tampered attempts were granted.
    await new Promise((r) => setTimeout(r, 500));
    expect(jobGrants.length, 'the job granted tampered-echo attempts').toBeGreaterThan(0);
    expect(failedIds(report), table).toEqual(['forged.tampered-echo']);
  }, 120_000);

  it('control: the sound sample app passes forged.tampered-echo', async () => {
    const app = await startSampleApp();
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['forged.tampered-echo'] });
    expect(failedIds(report), formatAuditTable(report)).toEqual([]);
  }, 120_000);
});
