/**
 * The audit's `leak.secret` search finds the client secret in the spellings ordinary integrator
 * code produces beyond the plain encodings: a Handlebars or Mustache template's escaping, JSON
 * escaped for a page, percent escapes with lower-case hex digits, the base64 of a short secret.
 */
import { describe, expect, it } from 'vitest';
import { findSecret, secretForms } from '../../testing/audit/secret.ts';

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
