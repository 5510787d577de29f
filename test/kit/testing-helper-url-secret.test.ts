/**
 * The testing helpers' errors never carry the client secret, nor any six characters of it: the
 * page they quote is redacted, and so is the URL they name it by (origin and path). Before, a page
 * whose path carried the secret (an app redirecting to a debug route named by it, the flaw the
 * audit looks for) copied it whole into the test log.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { forgetRememberedSecrets, rememberSecret } from '../../middleware/errors.ts';
import { createTestBrowser, type TestPage } from '../../testing/test-browser.ts';

const secret = 'kit-secret-3fa09c8b2e1d4119e0473812095a6f0c';
const partsOf = (text: string) => Array.from({ length: text.length - 5 }, (_, at) => text.slice(at, at + 6));

describe('testing helpers: a page URL carrying the client secret', () => {
  afterEach(() => forgetRememberedSecrets());

  it('submitForm\'s "No form" error leaves out the secret in the page path', async () => {
    rememberSecret(secret, 'kit-client');
    const page = {
      url: `http://127.0.0.1:9/oops/${secret}`,
      status: 500,
      html: `<p>Debug: client secret ${secret}</p>`,
      headers: new Headers(),
      location: undefined,
    } as unknown as TestPage;
    const error: Error = await createTestBrowser()
      .submitForm(page)
      .then(
        () => new Error('no error'),
        (e: unknown) => e as Error,
      );
    expect(error.message).toContain('No form');
    // The page is redacted.
    expect(error.message).toContain('Debug: client secret [redacted]');
    // And so is the URL the message names the page by.
    expect(partsOf(secret.slice('kit-secret-'.length)).filter((part) => error.message.includes(part))).toEqual([]);
  });
});
