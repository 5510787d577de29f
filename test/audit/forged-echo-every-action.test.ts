/**
 * A landing with a path of its own for one action (close_account re-reads the session and acts on
 * a verified status, checking the state in the URL but never the state and userRef the service
 * echoes) runs it for a status whose echo was tampered with. forged.tampered-echo landed the first
 * action of `actions` only, and passed such an app.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createVerifyClient } from 'hosted-sms-verify-kit';
import { auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

describe('a close_account landing that reads the status alone', () => {
  it('fails forged.tampered-echo, naming the action', async () => {
    // The client is made once the emulator runs; the landing reads it when it is requested.
    const reader: { client?: ReturnType<typeof createVerifyClient> } = {};
    const app = await startSampleApp({
      landing: (ctx) => async (req, res, next) => {
        const sessionId = typeof req.query.session_id === 'string' ? req.query.session_id : '';
        const attempt = await ctx.kit.store.findAttemptBySessionId(sessionId);
        if (reader.client !== undefined && attempt?.action === 'close_account' && req.query.state === attempt.state) {
          const read = await reader.client.getSession(sessionId);
          if (read.status === 'verified') {
            if (ctx.grants(sessionId) === 0) ctx.insert(sessionId, attempt.userRef);
            res.redirect(303, '/done');
            return;
          }
        }
        next();
      },
    });
    apps.push(app);
    reader.client = createVerifyClient({
      baseUrl: app.emulator.url,
      clientId: app.auditOptions.clientId,
      clientSecret: app.auditOptions.clientSecret,
    });
    const report = await auditIntegration({ ...app.auditOptions, only: ['forged.tampered-echo'] });
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toEqual(['forged.tampered-echo']);
    expect(table).toMatch(/close_account: after the service echoed another state/);
  }, 120_000);
});
