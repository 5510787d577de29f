/**
 * The audit's leak checks search for the client secret in every spelling a page, a URL or a log
 * may hold it in, and its evidence never quotes any of them.
 */
import { describe, expect, it } from 'vitest';
import { MIN_SECRET_LENGTH, secretSpellings } from '../../middleware/secret-spellings.ts';
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

describe('a short secret inside a longer base64 text, at every offset', () => {
  // The shortest secrets accepted, in a blob such as btoa(JSON.stringify(settings)).
  for (let length = MIN_SECRET_LENGTH; length <= MIN_SECRET_LENGTH + 6; length++) {
    const secret = 'Tq8-vX2pLm4rZs9w'.slice(0, length);
    const audited = secretForms('acme', secret);
    for (let offset = 0; offset < 3; offset++) {
      it(`${length} characters at offset ${offset} mod 3: found, and scrubbed to at most two characters at either end`, () => {
        const settings = `{"id":"acme"${',"v":1'.slice(0, offset)},"secret":"${secret}"}`;
        const at = settings.indexOf(secret);
        const blob = Buffer.from(settings).toString('base64');
        expect(at).toBe(23 + offset); // 23, 24, 25: each alignment once
        expect(findSecret(audited, `/welcome?cfg=${blob}`)).toBeDefined();
        const own = blob.slice(Math.ceil((at * 8) / 6), Math.floor(((at + length) * 8) / 6));
        const scrubbed = scrubSecret(audited, `/welcome?cfg=${blob}`);
        for (let i = 0; i + 3 <= own.length; i++) expect(scrubbed).not.toContain(own.slice(i, i + 3));
      });
    }
  }

  it("is one list: the audit searches for exactly the spellings the kit's redaction removes", () => {
    expect(secretForms('acme', SECRET)).toEqual(secretSpellings(SECRET, 'acme'));
  });
});
