/**
 * The client secret appears only in the Authorization header, in any encoding: an integrator's error
 * quoting it with every character percent-encoded (a URL it followed: `?k=%73%6B%5F…`) or written as
 * HTML character references (a page it fetched: `&#x73;&#x6b;…`, `&#115;&#107;…`) is logged with the
 * run that spells it replaced where it is written, the text around it kept; a part of it cut short is
 * removed from a service's text as a plain part is; a baseUrl carrying it so is refused without
 * quoting it. Ordinary escapes and references (`%20`, `&amp;`) are left as written.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { carriesSecret, redactSecretFragments, redactSecrets, rememberSecret } from '../../middleware/errors.ts';
import { createVerificationKit, KitErrorCode } from '../../middleware/index.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import { startTestApp } from '../support/app.ts';

/** Each character as `%XX` (upper- or lower-case hex), as an encoder escaping everything writes it. */
const percentEach = (text: string, lower = false) =>
  [...Buffer.from(text)]
    .map((byte) => `%${byte.toString(16).padStart(2, '0')[lower ? 'toLowerCase' : 'toUpperCase']()}`)
    .join('');
const hexReferences = (text: string) => [...text].map((c) => `&#x${c.codePointAt(0)!.toString(16)};`).join('');
const decimalReferences = (text: string) => [...text].map((c) => `&#${c.codePointAt(0)!};`).join('');

const SPELLINGS: [string, (secret: string) => string][] = [
  [
    'every character percent-encoded',
    (s) => `cannot fetch https://partner.example/cb?k=${percentEach(s)}&q=red%20shoes&amp;x=1`,
  ],
  [
    'lower-case escapes, encoded twice',
    (s) => `redirected to /next?u=${percentEach(s, true).replaceAll('%', '%25')} then`,
  ],
  ['hex character references', (s) => `page said: <p>key ${hexReferences(s)}</p>`],
  ['decimal character references', (s) => `page said: <p>key ${decimalReferences(s)}</p>`],
];

describe('redaction of the secret written character by character', () => {
  const secret = `sk_${randomBytes(12).toString('hex')}`;
  rememberSecret(secret);

  it.each(SPELLINGS)('replaces it where it is written, the text around it kept: %s', (_how, spell) => {
    const text = spell(secret);
    expect(redactSecrets(text)).toBe(text.replace(encodedRun(text), '[redacted]'));
    expect(redactSecretFragments(text)).toBe(text.replace(encodedRun(text), '[redacted]'));
  });

  it('replaces it cut by characters a browser shows as nothing (zero-width spaces, soft hyphens), as written', () => {
    const breakEvery4 = (mark: string) => (secret.match(/.{1,4}/g) ?? []).join(mark);
    for (const mark of ['\u200b', '\u00ad', '&#8203;', '&shy;']) {
      const text = `payout refused key ${breakEvery4(mark)} today`;
      expect(redactSecrets(text), text).toBe('payout refused key [redacted] today');
      expect(redactSecretFragments(text), text).toBe('payout refused key [redacted] today');
    }
  });

  it('keeps ordinary escapes and references as written', () => {
    for (const text of [
      'GET /search?q=red%20shoes&amp;page=2 failed: 50%25 of &lt;items&gt; &#39;gone&#39;',
      'Tom &amp; Jerry%2C 100% sure &copy; &#x20AC;5',
    ]) {
      expect(redactSecrets(text)).toBe(text);
      expect(redactSecretFragments(text)).toBe(text);
    }
  });

  it('removes a part of it cut short, decoded, from a text the service or a proxy wrote', () => {
    const cut = `proxy refused k=${percentEach(secret.slice(0, 12))}...`;
    expect(redactSecretFragments(cut)).toBe('proxy refused k=[redacted]...');
    const referenced = `<b>${hexReferences(secret.slice(4, 14))}</b>`;
    expect(redactSecretFragments(referenced)).toBe('<b>[redacted]</b>');
  });

  it('finds it in a baseUrl, and the kit refuses that baseUrl without quoting it', () => {
    const baseUrl = `https://verify.example.com/v1?k=${percentEach(secret)}`;
    expect(carriesSecret(baseUrl, secret)).toBe(true);
    expect(carriesSecret(`https://verify.example.com/v1?k=${hexReferences(secret)}`, secret)).toBe(true);
    expect(carriesSecret('https://verify.example.com/v1?q=a%20b&amp;c', secret)).toBe(false);
    let message = '';
    try {
      createVerificationKit({
        baseUrl,
        clientId: 'acme',
        clientSecret: secret,
        returnUrl: 'https://app.example.com/verify/return',
        store: createSqliteStore({ database: ':memory:' }),
        actions: [{ name: 'grant', operationSensitivity: 'normal', successPath: '/', fulfil: () => {} }],
        resolveUser: () => null,
      });
    } catch (error) {
      expect(error).toMatchObject({ code: KitErrorCode.InvalidOptions });
      message = (error as Error).message;
    }
    expect(message).toMatch(/baseUrl/);
    expect(message).not.toContain(percentEach(secret).slice(0, 24));
  });
});

/** The run of escapes or references in `text` that spells the secret: its longest. */
function encodedRun(text: string): string {
  const runs = text.match(/(?:%(?:25)?[\da-f]{2}|&#x?[\da-f]+;)+/gi) ?? [];
  expect(runs.length, text).toBeGreaterThan(0);
  return runs.sort((a, b) => b.length - a.length)[0]!;
}

describe("an integrator's error quoting the secret character by character, logged by the kit", () => {
  it.each(SPELLINGS)('is logged without it: %s', async (_how, spell) => {
    let kitSecret = '';
    const app = await startTestApp({
      kit: {
        // An integrator's hook failing with what its own HTTP call or page fetch saw.
        beforeCreate: () => {
          throw new Error(spell(kitSecret));
        },
      },
    });
    kitSecret = app.secret;
    try {
      const alice = await app.agent().signIn('alice');
      expect((await alice.tryStart('grant_badge')).status).toBe(500);
      const written = spell(kitSecret);
      const logged = app.logs.filter((line) => line.includes(written.slice(0, 12)));
      expect(logged.length).toBeGreaterThan(0);
      for (const line of logged) {
        expect(line, line).not.toContain(encodedRun(written).slice(0, 24));
        expect(line, line).toContain('[redacted]');
      }
    } finally {
      await app.close();
    }
  });
});
