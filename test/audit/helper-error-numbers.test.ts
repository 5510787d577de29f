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
