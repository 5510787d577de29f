/**
 * entered.number-masked reads a page as a browser decodes it, in the charset its Content-Type
 * names: a success page served as UTF-16 showing the typed number in full shows it to its reader,
 * and fails as the same page in UTF-8 does.
 */
import { describe, expect, it } from 'vitest';
import { typedNumberPages } from './typed-number-page.ts';

const audited = typedNumberPages();

/** The success page showing the typed number whole, with its byte order mark, in `charset`. */
const pageIn = (charset: 'utf-8' | 'utf-16le') => (typed: string) => ({
  body: Buffer.from(
    `\uFEFF<!doctype html><title>Done</title><p>Your number is now ${typed}</p>`,
    charset === 'utf-8' ? 'utf8' : 'utf16le',
  ),
  charset,
});

describe.concurrent('entered.number-masked and a page in UTF-16', () => {
  it('control: the page in UTF-8 fails', async () => {
    const { check, table } = await audited(pageIn('utf-8'));
    expect(check?.status, table).toBe('fail');
  }, 120_000);

  it('the same page in UTF-16 fails', async () => {
    const { check, table } = await audited(pageIn('utf-16le'));
    expect(check?.status, table).toBe('fail');
  }, 120_000);
});
