/**
 * What the audit reports never quotes the client secret written character by character: as HTML
 * character references (`&#x73;&#x6b;…`, an error of your code quoting a page) or with every
 * character percent-encoded (`%73%6B%5F…`, a URL your app redirects to). A browser shows either as
 * the secret, so the report must not carry it, whole or a part of it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditIntegration, formatAuditJson, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { decodeHtml } from '../../testing/html.ts';
import { scrubSecret, secretForms } from '../../testing/audit/secret.ts';
import { startSampleApp, type SampleApp } from './sample-app.ts';
import { decimalReferences, everyCharacterEscaped, hexReferences } from './secret-encodings.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

/** What a browser shows of `text`: references decoded, then percent escapes. */
const shown = (text: string) => decodeURIComponent(decodeHtml(text));

describe('scrubSecret on a secret written character by character', () => {
  const secret = 'sk_live_4eC39HqLyjWDarjtT1zdp7dc';
  const forms = secretForms('acme', secret);

  it.each([
    ['hex character references', hexReferences],
    ['decimal character references', decimalReferences],
    ['every character percent-encoded', everyCharacterEscaped],
    ['every character percent-encoded, lower case', (text: string) => everyCharacterEscaped(text).toLowerCase()],
    ['references of percent escapes', (text: string) => everyCharacterEscaped(text).replaceAll('%', '&#37;')],
  ])('removes it written as %s, whole or a part of it, and keeps the text around it', (_how, spell) => {
    for (const part of [secret, secret.slice(0, 12), secret.slice(-14)]) {
      const line = `/welcome?ref=${spell(part)}&lang=en answered 200`;
      expect(shown(line)).toContain(part);
      const scrubbed = scrubSecret(forms, line);
      expect(shown(scrubbed)).not.toContain(part.slice(0, 8));
      expect(scrubbed).toMatch(/^\/welcome\?ref=\[client secret\]&lang=en answered 200$/);
    }
  });

  it('leaves ordinary references and escapes as written', () => {
    const line = `Caf&eacute; &amp; &#x2014; /search?q=sk%5Flive%20keys%3F&page=2 &#115;&#107;_`;
    expect(scrubSecret(forms, line)).toBe(line);
  });
});

describe('the report of an app that writes the secret character by character', () => {
  it('never quotes it from a URL the app redirects to, its characters percent-encoded', async () => {
    const app = await startSampleApp({
      done: (_req, res, ctx) => {
        // "Pass the key along, encoded so nobody reads it": the address bar shows it all the same.
        res.redirect(303, `/welcome?ref=${everyCharacterEscaped(ctx.clientSecret)}`);
        return true;
      },
    });
    apps.push(app);
    const report = await auditIntegration({ ...app.auditOptions, only: ['landing.pages'] });
    const json = formatAuditJson(report);
    // The page is in the evidence: its path is quoted, the secret in its query is not.
    expect(json).toContain('/welcome?ref=');
    for (const out of [json, formatAuditTable(report)]) {
      expect(shown(out)).not.toContain(app.clientSecret.slice(0, 12));
      expect(out.toUpperCase()).not.toContain(everyCharacterEscaped(app.clientSecret.slice(0, 4)));
    }
  }, 60_000);

  it('never quotes it from an error of your sign-in that quotes a page, written as references', async () => {
    const app = await startSampleApp({});
    apps.push(app);
    const report = await auditIntegration({
      ...app.auditOptions,
      only: ['landing.pages'],
      signIn: () => {
        throw new Error(`sign-in page said: <p>key ${hexReferences(app.clientSecret)} expired</p>`);
      },
    });
    const json = formatAuditJson(report);
    expect(report.stopped).toMatch(/sign-in page said: <p>key \[client secret\] expired<\/p>/);
    expect(shown(json)).not.toContain(app.clientSecret.slice(0, 12));
    expect(shown(formatAuditTable(report))).not.toContain(app.clientSecret.slice(0, 12));
  }, 60_000);
});
