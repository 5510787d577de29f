/**
 * The testing helpers' page excerpt masks phone numbers and redacts the client secret. A secret
 * holding a run of seven digits or more (as a random hex secret often does) reads as a number too:
 * masked first, it was no longer whole, and the letters between its masked runs (shorter than the
 * pieces redaction looks for) went into the test log. Redacted first, nothing of it is left.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { forgetRememberedSecrets, rememberSecret } from '../../middleware/errors.ts';
import { pageExcerpt } from '../../testing/html.ts';

/** Every six characters of `text`: the shortest part of a secret a reader could still use. */
const partsOf = (text: string) => Array.from({ length: text.length - 5 }, (_, at) => text.slice(at, at + 6));

describe('the page excerpt: a client secret with digit runs', () => {
  afterEach(() => forgetRememberedSecrets());

  it.each([
    ['a run in the middle', 'kit-secret-3fa09c8b2e1d4119e0473812095a6f0c'],
    ['a run near the end', 'kit-secret-ab9f3ce0d2a77c1b5e6fed41193827465e'],
    ['two runs close together', 'kit-secret-c0ffee12345678abc98765432fedcba0'],
  ])('leaves no six characters of it when it holds %s', (_, secret) => {
    rememberSecret(secret);
    const excerpt = pageExcerpt(`<!doctype html><title>Settings</title><p>Debug: client secret ${secret}</p>`, 600);
    expect(excerpt).toContain('Debug: client secret [redacted]');
    expect(partsOf(secret.slice('kit-secret-'.length)).filter((part) => excerpt.includes(part))).toEqual([]);
  });

  it('still masks a phone number the page shows beside it', () => {
    const secret = 'kit-secret-3fa09c8b2e1d4119e0473812095a6f0c';
    rememberSecret(secret);
    const excerpt = pageExcerpt(`<p>We will text 07700 900123. Debug: ${secret}</p>`, 600);
    expect(excerpt).toBe('<p>We will text [a number ending 23]. Debug: [redacted]</p>');
  });
});
