/**
 * The client secret appears nowhere in any encoding: the kit's redaction removes it as
 * `JSON.stringify` writes a Buffer holding it (`{"type":"Buffer","data":[115,107,…]}`, as pino and
 * most JSON loggers write one) and with every character a `\u` escape (an ASCII-only JSON writer
 * escaping everything, hex digits in either case), whole or cut short. Before the fix both were
 * left in the text, readable. The console logger works out the environment's secrets' spellings
 * once, not per line, and still removes a secret remembered after it was made.
 */
import { describe, expect, it } from 'vitest';
import { redactSecretFragments, redactSecrets, rememberSecret } from '../../middleware/errors.ts';
import { createConsoleLogger } from '../../middleware/logger.ts';

const SECRET = 'sk_live_4f9a1c7e2b8d6f3a0c5e9b1d';
rememberSecret(SECRET);

const bufferAsJson = (text: string) => JSON.stringify({ clientSecret: Buffer.from(text) });
const unicodeEscaped = (text: string, hexDigits: 'lower' | 'upper') =>
  text
    .split('')
    .map((unit) => unit.charCodeAt(0).toString(16).padStart(4, '0'))
    .map((hex) => `\\u${hexDigits === 'upper' ? hex.toUpperCase() : hex}`)
    .join('');

/** Whether `text` still holds 8 characters in a row of SECRET, read back from a Buffer's JSON or from \u escapes. */
function readable(text: string): boolean {
  const bytes = /"data":\[([\d,]+)\]/.exec(text)?.[1];
  const fromBytes = bytes === undefined ? '' : Buffer.from(bytes.split(',').map(Number)).toString();
  const escapes = /(?:\\u[0-9a-fA-F]{4})+/.exec(text)?.[0];
  const fromEscapes = escapes === undefined ? '' : (JSON.parse(`"${escapes}"`) as string);
  const runs = [...Array(SECRET.length - 7).keys()].map((at) => SECRET.slice(at, at + 8));
  return [fromBytes, fromEscapes].some((decoded) => runs.some((run) => decoded.includes(run)));
}

const WHOLE: [string, string][] = [
  ['a Buffer as JSON', `config ${bufferAsJson(SECRET)}`],
  ['every character a \\u escape, lower-case hex', `{"clientSecret":"${unicodeEscaped(SECRET, 'lower')}"}`],
  ['every character a \\u escape, upper-case hex', `{"clientSecret":"${unicodeEscaped(SECRET, 'upper')}"}`],
];
const CUT: [string, string][] = [
  ['the first 16 bytes of a Buffer as JSON', `config ${bufferAsJson(SECRET.slice(0, 16))}`],
  ['the last 12 characters as \\u escapes', `k="${unicodeEscaped(SECRET.slice(-12), 'lower')}"`],
];

describe("the kit's redaction of the secret written byte by byte", () => {
  it.each(WHOLE)('removes it whole: %s', (_how, text) => {
    expect(readable(text)).toBe(true);
    expect(readable(redactSecrets(text)), redactSecrets(text)).toBe(false);
    expect(readable(redactSecretFragments(text)), redactSecretFragments(text)).toBe(false);
    expect(redactSecretFragments(text)).toMatch(/^(?:config )?\{"clientSecret":.*\[redacted\]/);
  });

  it.each(CUT)('removes a part of it cut short: %s', (_how, text) => {
    expect(readable(text)).toBe(true);
    expect(readable(redactSecretFragments(text)), redactSecretFragments(text)).toBe(false);
  });
});

describe("the console logger's environment secrets", () => {
  it('are removed from every line, and so is a client secret remembered after the logger was made', () => {
    const password = 'Pw-7fQ2mXr9LkT4z';
    const lines: string[] = [];
    const logger = createConsoleLogger((_level, line) => lines.push(line), { DATABASE_PASSWORD: password });
    logger.warn({ db: Buffer.from(password) }, 'pool failed');
    const later = 'sk_test_9d2e7b4c1a8f5e3d6b0c';
    rememberSecret(later);
    logger.warn({ db: JSON.stringify(Buffer.from(later)), again: password }, 'pool failed');
    expect(lines).toHaveLength(2);
    expect(lines.join('\n')).not.toContain(password.slice(0, 8));
    expect(lines[1]).not.toContain([...Buffer.from(later)].slice(0, 8).join(','));
  });
});
