/**
 * The audit's `leak.secret` search finds the client secret in the spellings ordinary integrator
 * code produces beyond the plain encodings: a Handlebars or Mustache template's escaping, JSON
 * escaped for a page, percent escapes with lower-case hex digits, the base64 of a short secret.
 * An app whose success page renders the secret through such a template fails `leak.secret`; and a
 * failed start's evidence names the app's answer by its status and content type, never quoting the
 * page (which may hold the secret in a spelling no search knows).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, failedIds, formatAuditJson, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { findSecret, secretForms } from '../../testing/audit/secret.ts';
import { startSampleApp, type SampleApp } from './sample-app.ts';

/** Mustache.js / Handlebars `{{value}}` escaping (express-handlebars, mustache-express). */
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

/** JSON as Express sends it with `app.set('json escape', true)`, or as SSR state is embedded in a <script>. */
function jsonHtmlSafe(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
}

describe("the audit's spellings of the client secret", () => {
  it('finds a base64-style secret rendered by a Handlebars/Mustache template (`=` as &#x3D;, `/` as &#x2F;)', () => {
    const secret = 'Zm9v/YmFyK2Jhei1xdXV4LXNlY3JldA==';
    const page = `<meta name="client" content="${mustacheEscaped(secret)}">`;
    // The whole secret is on the page, one entity decode away.
    expect(page.replace(/&#x3D;/g, '=').replace(/&#x2F;/g, '/')).toContain(secret);
    expect(findSecret(secretForms('acme', secret), page), page).toBeDefined();
  });

  it('finds a secret in JSON escaped for HTML (Express `json escape`, SSR state: `<` as \\u003c, `&` as \\u0026)', () => {
    const secret = 'sk_live<7Hq2WmX9pL4vR8&tY3nB6cJ1dF5gK>';
    const body = `<script>window.__CONFIG__=${jsonHtmlSafe({ clientSecret: secret })}</script>`;
    expect(JSON.parse(/=(\{.*\})</.exec(body)?.[1] ?? '{}')).toEqual({ clientSecret: secret });
    expect(findSecret(secretForms('acme', secret), body), body).toBeDefined();
  });

  it('finds a secret percent-encoded with lower-case hex digits (.NET HttpUtility.UrlEncode: %2f, %2b, %3d)', () => {
    const secret = 'Zm9v/YmFyK2Jhei1xdXV4+c2VjcmV0==';
    const lower = encodeURIComponent(secret).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());
    const url = `https://app.example.com/debug?client_secret=${lower}`;
    expect(decodeURIComponent(lower)).toBe(secret);
    expect(findSecret(secretForms('acme', secret), url), url).toBeDefined();
  });

  it('finds the plain base64 of a 10-character secret (shorter than any base64 core searched for)', () => {
    const secret = 'k3Y-9xQ!zr';
    const header = `x-debug-client: ${Buffer.from(secret).toString('base64')}`;
    expect(findSecret(secretForms('acme', secret), header), header).toBeDefined();
  });
});

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
