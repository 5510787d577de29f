/**
 * The app's kit is the integrator's object: one whose `serviceUrl` getter throws (a kit built
 * lazily, "kit not configured") stops the audit with a reason in the report, scrubbed, instead of
 * rejecting `auditIntegration` with the integrator's raw error (its stack, the secret it quoted).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, formatAuditJson, type AuditReport } from 'hosted-sms-verify-kit/testing';
import { startIntegratorApp, type IntegratorApp } from './integrator-app.ts';

const apps: IntegratorApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

describe('a kit whose serviceUrl getter throws', () => {
  it('stops the audit with a reason (no rejection, no stack, no secret)', async () => {
    const app = await startIntegratorApp();
    apps.push(app);
    const { kit, clientSecret } = app.auditOptions as { kit: { attempts: unknown }; clientSecret: string };
    const lazyKit = {
      attempts: kit.attempts,
      get serviceUrl(): string {
        throw new Error(`kit not configured yet (clientSecret ${clientSecret} not validated)`);
      },
    };
    let report: AuditReport | undefined;
    let thrown: unknown;
    try {
      report = await auditIntegration({
        ...app.auditOptions,
        kit: lazyKit as never,
        only: ['forged.unknown-session'],
      });
    } catch (error) {
      thrown = error;
    }
    expect(thrown, `auditIntegration rejected with: ${String((thrown as Error | undefined)?.stack)}`).toBeUndefined();
    expect(report?.ok).toBe(false);
    expect(report?.stopped).toBeDefined();
    expect(formatAuditJson(report!)).not.toContain(clientSecret);
  }, 90_000);
});
