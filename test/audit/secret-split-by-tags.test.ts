/**
 * `leak.secret` reads a page as its reader sees it too: a client secret a template cut into
 * elements (`<span>sk_live_</span><b>…</b>`), each piece shorter than the part the search looks
 * for, is the whole secret on the screen, and fails the check as the secret written in one piece does.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { AuditAgent, auditIntegration, failedIds, formatAuditTable } from 'hosted-sms-verify-kit/testing';
import { MIN_LEAKED_PART, secretForms, secretSpellingIn } from '../../testing/audit/secret.ts';
import { startSampleApp, type SampleApp } from './sample-app.ts';

const apps: SampleApp[] = [];
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
});

/** `text` in pieces of `size` characters, each in an element of its own, a line between two. */
function cutByTags(text: string, size: number): string {
  const pieces = text.match(new RegExp(`.{1,${size}}`, 'gs')) ?? [];
  return pieces.map((piece, i) => (i % 2 === 0 ? `<span>${piece}</span>` : `<b>${piece}</b>\n`)).join('');
}

/** What a reader sees of a page: its text without the tags (and the line breaks between them). */
const asSeen = (page: string) => page.replace(/\s*<[^>]*>\s*/g, '');

describe('the client secret cut into elements', () => {
  it('is found in a page, though no piece is as long as the part searched for', () => {
    const secret = 'sk_live_4eC39HqLyjWDarjtT1zdp7dc';
    const page = `<p>Your key: ${cutByTags(secret, 7)}</p>`;
    expect(asSeen(page)).toContain(secret);
    expect(page.match(/>([^<]*)</g)!.every((text) => text.length - 2 < MIN_LEAKED_PART)).toBe(true);
    expect(secretSpellingIn(secretForms('acme', secret), page, true)).toMatch(/ split by a page's tags$/);
    // Ordinary markup holds no part of it.
    expect(secretSpellingIn(secretForms('acme', secret), '<p>sk_live</p><b>keys</b>', true)).toBeUndefined();
  });

  it("fails leak.secret for an app whose success page shows it so (the page's markup alone passed)", async () => {
    const app = await startSampleApp({
      done: (_req, res, ctx) => {
        res.setHeader('Cache-Control', 'no-store');
        // "Show the key so the support team can read it, styled per group."
        res.send(`<!doctype html><title>Done</title><p>Client: ${cutByTags(ctx.clientSecret, 6)}</p>`);
        return true;
      },
    });
    apps.push(app);
    // The mistake is real: a reader of the page sees the whole secret.
    const done = await new AuditAgent(app.url, () => {}).request('/done');
    expect(asSeen(done.body)).toContain(app.clientSecret);
    expect(done.body).not.toContain(app.clientSecret.slice(0, MIN_LEAKED_PART));
    const report = await auditIntegration({ ...app.auditOptions, only: ['leak.secret'] });
    const table = formatAuditTable(report);
    expect(failedIds(report), table).toEqual(['leak.secret']);
    expect(table).toMatch(/the client secret \(as is, split by a page's tags\) in GET \/done response body/);
    expect(table).not.toContain(app.clientSecret.slice(0, 8));
  }, 60_000);
});
