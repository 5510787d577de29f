/**
 * The testing helpers' page excerpt (quoted in the errors of verifyEnteredNumber, walkHostedPage,
 * verifyStepUp and the test browser) quotes no page that shows a client secret split across lines:
 * cut by <br> tags, or by inline tags with a line break between them (the audit's leak.secret finds
 * both). Each piece was shorter than the 8 characters redaction recognises, and such pages were
 * quoted whole: 21 twelve-character parts of the secret read in the excerpt.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { forgetRememberedSecrets, rememberSecret } from '../../middleware/errors.ts';
import { pageExcerpt } from '../../testing/html.ts';

const secret = 'kit-secret-3fa09c8b2e1d4119e0473812095a6f0c';
const chunks = (text: string, size: number) => text.match(new RegExp(`.{1,${size}}`, 'g')) ?? [];
/** What the log shows once the markup and the line breaks beside it are dropped (as leak.secret reads a page). */
const asRead = (text: string) => text.replace(/\s*<[^>]*>\s*/g, '');
/** Its 12-character parts (the audit's MIN_LEAKED_PART) past the public prefix. */
const parts = (text: string) => Array.from({ length: text.length - 11 }, (_, at) => text.slice(at, at + 12));
const leakedParts = (excerpt: string) =>
  parts(secret.slice('kit-secret-'.length)).filter((part) => asRead(excerpt).includes(part));

describe('the page excerpt: a client secret split across lines', () => {
  afterEach(() => forgetRememberedSecrets());

  it('quotes no part of it when <br> tags cut it every 4 characters', () => {
    rememberSecret(secret, 'kit-client');
    const page = `<!doctype html><p>Your key:<br>${chunks(secret, 4).join('<br>')}</p>`;
    const excerpt = pageExcerpt(page, 2000);
    expect(leakedParts(excerpt), excerpt).toEqual([]);
  });

  it('quotes no part of it when inline tags cut it every 3 characters, a line break between pairs', () => {
    rememberSecret(secret, 'kit-client');
    const page = `<p>Your key: ${chunks(secret, 3)
      .map((piece, i) => (i % 2 === 0 ? `<span>${piece}</span>` : `<b>${piece}</b>\n`))
      .join('')}</p>`;
    const excerpt = pageExcerpt(page, 2000);
    expect(leakedParts(excerpt), excerpt).toEqual([]);
  });
});
