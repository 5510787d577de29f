/**
 * The testing helpers' page excerpt leaves out every client secret a page shows as a browser shows
 * it: one written in pieces between inline tags (`<wbr>` break opportunities in a long token,
 * `<span>` groups as key displays do) is whole to a reader while each piece is shorter than the
 * eight characters redaction recognises, so such a page is not quoted at all. Before, the pieces
 * went into the test log: the whole secret, readable once the tags are dropped.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { forgetRememberedSecrets, rememberSecret } from '../../middleware/errors.ts';
import { pageExcerpt } from '../../testing/html.ts';

const secret = 'kit-secret-3fa09c8b2e1d4119e0473812095a6f0c';
const partsOf = (text: string) => Array.from({ length: text.length - 5 }, (_, at) => text.slice(at, at + 6));
const chunks = (text: string, size: number) => text.match(new RegExp(`.{1,${size}}`, 'g')) ?? [];
const leaked = (excerpt: string) =>
  partsOf(secret.slice('kit-secret-'.length)).filter((part) => excerpt.includes(part));
/** What a reader of the excerpt sees: its tags dropped, as the browser dropped them. */
const asShown = (html: string) => html.replace(/<[^>]*>/g, '');

describe('the page excerpt: a client secret split by inline tags', () => {
  afterEach(() => forgetRememberedSecrets());

  it('leaves no six characters of it when <wbr> breaks it every 7 characters', () => {
    rememberSecret(secret, 'kit-client');
    const page = `<!doctype html><p>Debug: client secret <code>${chunks(secret, 7).join('<wbr>')}</code></p>`;
    const excerpt = pageExcerpt(page, 600);
    expect(excerpt).toBe('[not quoted: the page shows a client secret split by tags]');
    expect(leaked(excerpt)).toEqual([]);
  });

  it('leaves nothing of it a reader of the log sees when <span> groups it by 4', () => {
    rememberSecret(secret, 'kit-client');
    const page = `<p>Your key: ${chunks(secret, 4)
      .map((c) => `<span>${c}</span>`)
      .join('')}</p>`;
    const excerpt = pageExcerpt(page, 2000);
    expect(leaked(asShown(excerpt))).toEqual([]);
  });
});
