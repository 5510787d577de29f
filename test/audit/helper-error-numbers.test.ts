/**
 * The testing helpers' errors quote the start of the page they failed on, hidden fields left out.
 * A page quoting a user's own number ("We will text +44 7700 900123") put that number in full into
 * the test log, where the audit's report masks every number: the quote masks every number the page
 * shows, international or national, as the report does ("[a number ending 23]").
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestBrowser } from 'hosted-sms-verify-kit/testing';
import { describe, expect, it } from 'vitest';
import { pageExcerpt } from '../../testing/html.ts';

const PAGE =
  '<!doctype html><title>Confirm</title><p>We will text +44 7700 900123 (your number on file), or 07700 900456.</p>' +
  '<form method="post" action="/verify/start"><button>Text me</button></form>';

/** The error submitForm throws when the page served has no form posting to /elsewhere. */
async function errorOnPage(page: string): Promise<Error> {
  const server = createServer((_req, res) => res.setHeader('content-type', 'text/html').end(page));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const browser = createTestBrowser();
    const loaded = await browser.get(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    return await browser.submitForm(loaded, {}, { action: '/elsewhere' }).then(
      () => new Error('submitForm found a form posting to /elsewhere'),
      (error: unknown) => error as Error,
    );
  } finally {
    server.close();
  }
}

describe("the test helpers' error messages", () => {
  it('mask every phone number the page they quote shows', async () => {
    const failed = await errorOnPage(PAGE);
    expect(failed.message).toContain('No form posting to /elsewhere');
    expect(failed.message).toContain(
      'We will text +[a number ending 23] (your number on file), or [a number ending 56].',
    );
    expect(failed.message.replace(/\D/g, '')).not.toMatch(/7700900123|7700900456/);
  });

  it('mask a number the page splits with tags, as a reader sees it whole', async () => {
    const failed = await errorOnPage(
      '<main><p>We cannot text <span class="g">07400</span> <span class="g">123456</span>.</p></main>',
    );
    expect(failed.message).toContain('We cannot text <span class="g">[a number ending 56]</span>.');
    expect(failed.message.replace(/<[^>]*>/g, '').replace(/\D/g, '')).not.toContain('7400123456');
  });
});

describe('the page excerpt: a number split by inline tags, however the page writes them', () => {
  const classes =
    'inline-flex items-center rounded-md bg-gray-50 px-2 py-1 text-xs font-medium text-gray-600 ring-1 ' +
    'ring-inset ring-gray-500/10 tracking-wide tabular-nums whitespace-nowrap select-all dark:bg-gray-800';
  it.each([
    [
      'a span with a class list longer than 200 characters',
      `<span class="${classes}">07400</span> <span class="${classes}">123456</span>`,
    ],
    ['&#xA0; between the spans', '<span>07400</span>&#xA0;<span>123456</span>'],
    ['&thinsp; between the spans', '<span>07400</span>&thinsp;<span>123456</span>'],
    ['&nbsp without its ;', '<span>07400</span>&nbsp<span>123456</span>'],
    ['a title holding ">"', '<span>07400</span> <span title="mobile > home">123456</span>'],
    ['a comment between the groups', '<b>07400</b><!-- mobile -->123456'],
  ])('%s: masked as one', (_, number) => {
    const excerpt = pageExcerpt(`<p>We will text ${number}.</p>`, 2000);
    expect(excerpt, excerpt).toContain('[a number ending 56]');
    expect(excerpt, excerpt).not.toMatch(/07400[\s\S]*123456/);
  });

  it('an amount in a cell and a count in a form are no number: the form is quoted as it is', () => {
    const page =
      '<table><tr><td>Total</td><td>120.50</td></tr></table>' +
      '<form method="post" action="/checkout/pay"><p>10 items</p><button>Pay</button></form>';
    expect(pageExcerpt(page, 2000)).toBe(page);
  });
});
