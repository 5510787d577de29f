/**
 * An integrator app whose success page renders the client secret through a Handlebars/Mustache
 * template (`{{clientSecret}}`: `=` as &#x3D;, `/` as &#x2F;) fails the audit's `leak.secret`
 * check; and a failed start's evidence names the app's answer by its status and content type,
 * never quoting the page (which may hold the secret in a spelling no search knows).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditJson, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { startSampleApp, type SampleApp } from '../audit/sample-app.ts';

function mustacheEscaped(value: string): string {
  const map: Record<string, string> = {
    '&': '&amp;',
    '<': '&lt;',
    '>': '&gt;',
    '"': '&quot;',
    "'": '&#39;',
    '/': '&#x2F;',
    '`': '&#x60;',
    '=': '&#x3D;',
  };
  return value.replace(/[&<>"'`=/]/g, (c) => map[c] ?? c);
}

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
});

describe('leak.secret and a templated page', () => {
  it('fails an app whose success page shows the base64-style secret Handlebars-escaped', async () => {
    const secret = 'Zm9v/YmFyK2Jhei1xdXV4LXNlY3JldA==';
    let served = '';
    const app = await startSampleApp({
      secret,
      done: (_req, res) => {
        res.setHeader('Cache-Control', 'no-store');
        served = `<!doctype html><title>Done</title><meta name="client" content="${mustacheEscaped(secret)}"><p>Done.</p>`;
        res.send(served);
        return true;
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['leak.secret'] });
    // The tour reached the success page, which carries the secret.
    expect(served.replace(/&#x3D;/g, '=').replace(/&#x2F;/g, '/')).toContain(secret);
    expect(failedIds(report)).toContain('leak.secret');
  }, 60_000);
});

describe("the audit's own report", () => {
  it("a failed start's evidence never quotes the app's error page, which showed the secret Handlebars-escaped", async () => {
    const secret = 'Zm9v/YmFyK2Jhei1xdXV4LXNlY3JldA==';
    let starts = 0;
    const app = await startSampleApp({
      secret,
      before: (express) => {
        // The app's dev error page, rendered by its template engine, shows its configuration.
        express.post('/verify/start', (_req, res, next) => {
          starts += 1;
          if (starts === 1) return next();
          res.status(500).send(`<!doctype html><pre>VERIFY_CLIENT_SECRET=${mustacheEscaped(secret)}</pre>`);
        });
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['leak.secret'] });
    const table = formatAuditTable(report);
    const json = formatAuditJson(report);
    expect(table).toContain('not the kit');
    for (const text of [table, json]) expect(text, text).not.toContain(mustacheEscaped(secret));
  }, 60_000);
});
