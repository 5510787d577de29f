/**
 * The audit searches for the client secret as a Buffer's JSON writes its bytes (`115,107,95,…`)
 * and with every character a `\u` escape, whole, and from 6 of its bytes' worth on (as 12 hex
 * digits spell): a shorter run of such a spelling (a couple of the secret's characters) is what any
 * list of numbers or escaped text may hold, and fails nothing.
 */
import { describe, expect, it } from 'vitest';
import { findSecret, secretForms, secretSpellingIn } from '../../testing/audit/secret.ts';

const SECRET = 'sk_live_4f9a1c7e2b8d6f3a0c5e9b1d';
const forms = secretForms('acme', SECRET);

const decimal = (text: string, separator = ',') => [...Buffer.from(text)].join(separator);
const escaped = (text: string) =>
  text
    .split('')
    .map((unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .join('');

describe("the audit's search for the secret written byte by byte", () => {
  it.each([
    ['a Buffer as JSON', JSON.stringify({ s: Buffer.from(SECRET) })],
    ['its bytes as an array prints them', `[${decimal(SECRET, ', ')}]`],
    ['every character a \\u escape', `"${escaped(SECRET)}"`],
    ['every character a \\u escape, upper-case hex', `"${escaped(SECRET).toUpperCase().replaceAll('\\U', '\\u')}"`],
  ])('finds it whole: %s', (_how, text) => {
    expect(findSecret(forms, text)).toBeDefined();
  });

  it.each([
    ['8 of its bytes as a Buffer JSON', JSON.stringify(Buffer.from(SECRET.slice(8, 16)))],
    ['6 of its characters as \\u escapes', `"${escaped(SECRET.slice(20, 26))}"`],
  ])('finds a part of it: %s', (_how, text) => {
    expect(secretSpellingIn(forms, text, true)).toMatch(/characters or more of it/);
  });

  it.each([
    ['3 of its bytes in a list of numbers', `{"ids":[1,${decimal('sk_')},2]}`],
    ['5 of its characters escaped in other text', `"${escaped('cannot deliver to live_ queue')}"`],
  ])('finds nothing in a shorter run: %s', (_how, text) => {
    expect(secretSpellingIn(forms, text, true)).toBeUndefined();
  });
});
