/**
 * `leak.secret` reads a text as a browser shows it too: a client secret written in a page entirely
 * as HTML character references (`&#x73;&#x6b;…`, `&#115;&#107;…`), or with every character
 * percent-encoded in a link (`%73%6B%5F…`), is the secret on the screen or in the address bar,
 * and fails the check as the secret written as is does. The report never quotes it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { AuditAgent, auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { decodeHtml } from '../../testing/html.ts';
import { secretForms, secretSpellingIn } from '../../testing/audit/secret.ts';
import { startSampleApp, type SampleApp } from './sample-app.ts';
import { decimalReferences, everyCharacterEscaped, hexReferences } from './secret-encodings.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

describe('the client secret written character by character', () => {
  const secret = 'sk_live_4eC39HqLyjWDarjtT1zdp7dc';
  const forms = secretForms('acme', secret);

  it('is found written as hex or decimal character references, whole or a part of it', () => {
    expect(decodeHtml(hexReferences(secret))).toBe(secret);
    expect(secretSpellingIn(forms, `<p>Key: ${hexReferences(secret)}</p>`, true)).toMatch(/character references/);
    expect(secretSpellingIn(forms, `<p>Key: ${decimalReferences(secret)}</p>`, true)).toMatch(/character references/);
    expect(secretSpellingIn(forms, `<p>${decimalReferences(secret.slice(0, 14))}…</p>`, true)).toMatch(
      /^12 characters or more of it, .*character references/,
    );
  });

  it('is found with every character percent-encoded, in either case, whole or a part of it', () => {
    const link = `<a href="/support?key=${everyCharacterEscaped(secret)}">support</a>`;
    expect(secretSpellingIn(forms, link, true)).toMatch(/percent-encoded/);
    expect(secretSpellingIn(forms, link.toLowerCase(), true)).toMatch(/percent-encoded/);
    expect(secretSpellingIn(forms, `GET /support?hint=${everyCharacterEscaped(secret.slice(0, 13))}`, true)).toMatch(
      /^12 characters or more of it, .*percent-encoded/,
    );
  });

  it('still finds what it found, and nothing in ordinary references and escapes', () => {
    expect(secretSpellingIn(forms, `<p>${secret}</p>`, true)).toBe('as is');
    expect(secretSpellingIn(forms, `<p>${encodeURIComponent(secret)}</p>`, false)).toBe('as is');
    const ordinary = `<p>Caf&eacute; &amp; &#x2014; <a href="/search?q=sk%5Flive%20keys%3F">keys</a> &#115;&#107;_</p>`;
    expect(secretSpellingIn(forms, ordinary, true)).toBeUndefined();
  });

  it.each([
    ['as hex character references', hexReferences, /character references\) in GET \/done response body/],
    ['with every character percent-encoded in a link', everyCharacterEscaped, /percent-encoded\) in GET \/done/],
  ])(
    'fails leak.secret for an app whose success page shows it %s (the page passed)',
    async (_how, spell, evidence) => {
      const app = await startSampleApp({
        done: (_req, res, ctx) => {
          res.setHeader('Cache-Control', 'no-store');
          // "Obfuscate the key so scrapers cannot read it": a browser shows it all the same.
          const shown = spell(ctx.clientSecret);
          res.send(`<!doctype html><title>Done</title><p>Client: ${shown}</p><a href="/support?k=${shown}">help</a>`);
          return true;
        },
      });
      apps.push(app);
      const done = await new AuditAgent(app.url, () => {}).request('/done');
      // The mistake is real: what a browser shows of the page (or its link) is the whole secret.
      expect(decodeURIComponent(decodeHtml(done.body))).toContain(app.clientSecret);
      expect(done.body).not.toContain(app.clientSecret.slice(0, 8));
      const report = await auditIntegration({ ...app.auditOptions, only: ['leak.secret'] });
      const table = formatAuditTable(report);
      expect(failedIds(report), table).toEqual(['leak.secret']);
      expect(table).toMatch(evidence);
      expect(table).not.toContain(app.clientSecret.slice(0, 8));
      expect(table).not.toContain(spell(app.clientSecret).slice(0, 24));
    },
    60_000,
  );
});
