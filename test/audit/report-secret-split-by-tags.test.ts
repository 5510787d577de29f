/**
 * The client secret never reaches the audit's report, however it is cut: an integrator's error that
 * quotes a rendered HTML fragment holding the secret cut into elements shorter than any piece the
 * scrub looks for (`<b>sk_liv</b><b>e_4eC3</b>…`) is scrubbed as the leak search reads it, with its
 * tags left out, in the table and the JSON report alike.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, formatAuditJson, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startIntegratorApp, type IntegratorApp } from './integrator-app.ts';

const apps: IntegratorApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

const cutByTags = (text: string, size: number) =>
  (text.match(new RegExp(`.{1,${size}}`, 'gs')) ?? []).map((piece) => `<b>${piece}</b>`).join('');
const withoutTags = (text: string) => text.replace(/<[^>]*>/g, '');

describe('the report and a secret cut by tags in an integrator error', () => {
  it('never holds the client secret as a reader of the markup sees it', async () => {
    const app = await startIntegratorApp();
    apps.push(app);
    const secret = app.auditOptions.clientSecret;
    const report = await auditIntegration({
      ...app.auditOptions,
      only: ['forged.unknown-session'],
      probe: () => {
        throw new Error(`template render failed: <p>Client: ${cutByTags(secret, 6)}</p>`);
      },
    });
    const table = formatAuditTable(report);
    const json = formatAuditJson(report);
    // Control: the error reached the report.
    expect(table).toContain('template render failed');
    expect(withoutTags(table)).not.toContain(secret.slice(0, 12));
    expect(withoutTags(json)).not.toContain(secret.slice(0, 12));
  }, 90_000);
});
