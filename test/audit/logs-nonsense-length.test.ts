/**
 * The app's `logs()` answer is read under the audit's deadline: an array claiming a nonsense length
 * with no lines in it (2**31) is refused by its size, not walked index by index on the event loop
 * for tens of seconds, where no deadline can fire.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration } from 'hosted-sms-verify-kit/testing';
import { startIntegratorApp, type IntegratorApp } from './integrator-app.ts';

const apps: IntegratorApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

describe('logs() answering an array of nonsense length', () => {
  it('does not hold the audit past timeoutMs', async () => {
    const app = await startIntegratorApp();
    apps.push(app);
    const timeoutMs = 2_000;
    const options = { ...app.auditOptions, timeoutMs, only: ['leak.secret'] };
    let started = Date.now();
    await auditIntegration({ ...options, logs: () => [] });
    const baseline = Date.now() - started;
    const bogus: string[] = [];
    bogus.length = 2 ** 31;
    started = Date.now();
    await auditIntegration({ ...options, logs: () => bogus });
    const elapsed = Date.now() - started;
    expect(elapsed, `baseline ${baseline} ms`).toBeLessThan(baseline + timeoutMs + 5_000);
  }, 400_000);
});
