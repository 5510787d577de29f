/**
 * Every client secret the kit accepts is redacted wherever its base64 sits: the Basic header's
 * `clientId:secret`, and any longer base64 text holding the secret's bytes at any of the three
 * alignments. A secret too short for that is refused by createVerificationKit and by
 * createVerifyClient with a message that says how to fix the call and never quotes the value.
 */
import { describe, expect, it } from 'vitest';
import {
  createVerificationKit,
  createVerifyClient,
  KitErrorCode,
  type VerificationKitOptions,
} from '../../middleware/index.ts';
import { describeError } from '../../middleware/logger.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';

const CLIENT_ID = 'app';

function kitOptions(clientSecret: string): VerificationKitOptions<unknown> {
  return {
    baseUrl: 'https://verify.example.com',
    clientId: CLIENT_ID,
    clientSecret,
    returnUrl: 'https://app.example.com/verify/return',
    store: createSqliteStore({ database: ':memory:' }),
    actions: [{ name: 'grant', operationSensitivity: 'normal', successPath: '/', fulfil: () => {} }],
    resolveUser: () => null,
  };
}

/** The error `make` throws, or undefined when it accepts the secret. */
function refusal(make: () => unknown): Error | undefined {
  try {
    make();
    return undefined;
  } catch (error) {
    return error as Error;
  }
}

/** A secret of `length` characters, different for each length (letters, digits and punctuation). */
function secretOf(length: number): string {
  const alphabet = 'Kq7!zR2~mX9(pL4)vN8+wT3/';
  return Array.from({ length }, (_, i) => alphabet[(i * 7 + length) % alphabet.length]).join('');
}

/**
 * The runs of base64 characters of `encoded` whose six bits all come from the secret's bytes
 * (bytes `from` to `from + length` of what was encoded): what must not be readable after redaction.
 */
function secretOnlyRuns(encoded: string, from: number, length: number): string[] {
  const first = Math.ceil((from * 8) / 6);
  const last = Math.floor(((from + length) * 8) / 6); // exclusive
  return first < last ? [encoded.slice(first, last)] : [];
}

/** Every 4 characters of `runs`: more than a partial group at either end of a redaction. */
function windows(runs: string[]): string[] {
  return runs.flatMap((run) => Array.from({ length: Math.max(0, run.length - 3) }, (_, i) => run.slice(i, i + 4)));
}

/** What is left readable of `text` once logged: the pieces between redactions. */
function logged(text: string): string[] {
  return String(describeError(new Error(text)).message).split('[redacted]');
}

describe('a client secret of every length from 1 to 40 characters', () => {
  for (let length = 1; length <= 40; length++) {
    const secret = secretOf(length);
    it(`${length} characters: refused with the fix, or redacted in base64 at every offset and in the Basic header`, () => {
      const refused = refusal(() => createVerificationKit(kitOptions(secret)));
      const clientRefused = refusal(() =>
        createVerifyClient({ baseUrl: 'https://verify.example.com', clientId: CLIENT_ID, clientSecret: secret }),
      );
      expect(clientRefused === undefined, 'the kit and the client accept the same secrets').toBe(refused === undefined);
      if (refused !== undefined) {
        expect(refused).toMatchObject({ code: KitErrorCode.InvalidOptions });
        for (const error of [refused, clientRefused!]) {
          expect(error.message).toMatch(/`clientSecret` is shorter than \d+ characters/);
          expect(error.message).toContain('pass the issued secret');
          // Fewer than 4 characters could be in any sentence.
          if (length >= 4) expect(error.message).not.toContain(secret);
        }
        return;
      }
      const basic = `Basic ${Buffer.from(`${CLIENT_ID}:${secret}`).toString('base64')}`;
      const left = logged(`the proxy said: unauthorized (${basic})`).join(' ');
      expect(left, left).not.toContain(basic.slice('Basic '.length));
      const basicRuns = secretOnlyRuns(basic.slice('Basic '.length), CLIENT_ID.length + 1, secret.length);
      for (const piece of windows(basicRuns)) expect(left, `${piece} of the Basic header`).not.toContain(piece);
      // The secret inside any longer base64 text (a JSON blob, a cookie) starts at offset 0, 1 or 2 mod 3.
      for (let offset = 0; offset < 6; offset++) {
        const bytes = Buffer.concat([
          Buffer.from('{"k":"xyz'.slice(0, offset)),
          Buffer.from(secret),
          Buffer.from('"}'),
        ]);
        const encoded = bytes.toString('base64');
        const pieces = logged(`state=${encoded}`);
        for (const piece of windows(secretOnlyRuns(encoded, offset, Buffer.byteLength(secret)))) {
          expect(pieces.join(' '), `offset ${offset}: ${piece}`).not.toContain(piece);
        }
      }
    });
  }
});
