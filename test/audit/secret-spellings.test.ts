/**
 * The audit's leak checks search for the client secret in every spelling a page, a URL or a log
 * may hold it in, and its evidence never quotes any of them.
 */
import { describe, expect, it } from 'vitest';
import { findSecret, scrubSecret, secretForms } from '../../testing/audit/secret.ts';

// Punctuation makes each encoding spell it differently.
const SECRET = "Qx7!mZp~2vK(9rT)wL'4n/B8+sYd==";
const forms = secretForms('acme', SECRET);

const userinfo = (() => {
  const url = new URL('https://verify.example.com');
  url.password = SECRET;
  return url.password;
})();

const carriers: [string, string][] = [
  ['as is', `secret=${SECRET};`],
  ['URL-encoded', `?s=${encodeURIComponent(SECRET)}&`],
  ['form-encoded', `body: ${new URLSearchParams({ client_secret: SECRET }).toString()}`],
  ["in a URL's userinfo", `https://acme:${userinfo}@verify.example.com/`],
  ['JSON-escaped', JSON.stringify({ s: SECRET })],
  ['base64 as Basic credentials', `Authorization: Basic ${Buffer.from(`acme:${SECRET}`).toString('base64')}`],
  [
    'base64 as Basic credentials, URL-encoded',
    `?auth=${encodeURIComponent(`Basic ${Buffer.from(`acme:${SECRET}`).toString('base64')}`)}`,
  ],
  ['hex', `<meta content="${Buffer.from(SECRET).toString('hex')}">`],
  ['hex (upper case)', `0x${Buffer.from(SECRET).toString('hex').toUpperCase()};`],
];

describe("the audit's spellings of the client secret", () => {
  it.each(carriers)('finds it %s, and scrubs it from evidence', (_name, text) => {
    expect(findSecret(forms, text)).toBeDefined();
    const scrubbed = scrubSecret(forms, text);
    expect(findSecret(forms, scrubbed)).toBeUndefined();
    expect(scrubbed).not.toContain(SECRET.slice(0, 12));
  });
});
