/**
 * The report's scrub removes the client secret in every spelling the search knows, one cut by
 * invisible characters too (U+200B, U+00AD): an integrator's error quoting a value so (a message
 * formatted for wrapping) is never printed with the secret, as a reader of the terminal sees it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, formatAuditJson, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startIntegratorApp, type IntegratorApp } from './integrator-app.ts';

const apps: IntegratorApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

const breakable = (text: string, mark: string, size = 4) =>
  (text.match(new RegExp(`.{1,${size}}`, 'gs')) ?? []).join(mark);
const visible = (text: string) => text.replace(/[\u200B\u00AD]/g, '');

describe('the report and a secret cut by invisible characters', () => {
  it('never holds the client secret as a reader sees it', async () => {
    const app = await startIntegratorApp();
    apps.push(app);
    const secret = app.auditOptions.clientSecret;
    const report = await auditIntegration({
      ...app.auditOptions,
      only: ['forged.unknown-session'],
      probe: () => {
        throw new Error(`pool refused options {"clientSecret":"${breakable(secret, '\u200B')}"}`);
      },
    });
    const table = formatAuditTable(report);
    const json = formatAuditJson(report);
    // Control: the same error with the secret as is is scrubbed.
    expect(table).not.toContain(secret);
    expect(visible(table)).not.toContain(secret.slice(0, 12));
    expect(visible(json)).not.toContain(secret.slice(0, 12));
  }, 90_000);
});
