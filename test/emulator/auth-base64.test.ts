/**
 * Basic auth takes the credentials only as BASE64(client_id:secret), the standard padded base64 of
 * RFC 4648 (spec "Authentication": `Authorization: Basic <BASE64(client_id:secret)>`). Node's decoder
 * also reads a token without its "=", with extra "=" or with stray low bits in its last character;
 * an emulator that accepted those would let an integration that builds the header by hand pass here
 * and be refused by the service.
 */
import { describe, expect, it } from 'vitest';
import { WEB_CLIENT, createSession, newSession, readSession, useTestEmulator } from '../support/emulator.ts';

const emulator = useTestEmulator();
const canonical = Buffer.from(`${WEB_CLIENT.clientId}:${WEB_CLIENT.secret}`).toString('base64');
const unpadded = canonical.replace(/=+$/, '');
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
/** The same bytes with the last data character's unused low bits set: decodes alike, is not BASE64(...). */
const strayBits = (() => {
  const last = unpadded.at(-1) ?? 'A';
  const flipped = ALPHABET[ALPHABET.indexOf(last) | 1] ?? last;
  return `${unpadded.slice(0, -1)}${flipped}${canonical.slice(unpadded.length)}`;
})();

const looseTokens: Array<[string, string]> = [
  ['without its padding', unpadded],
  ['with extra padding', `${canonical}==`],
  ['with stray low bits in its last character', strayBits],
];

describe('spec Authentication: only BASE64(client_id:secret) is accepted', () => {
  it('the loose tokens decode to the right credentials (so only their spelling is refused)', () => {
    expect(canonical).toMatch(/=$/); // the test client's credentials need padding
    for (const [, token] of looseTokens) {
      expect(token).not.toBe(canonical);
      expect(Buffer.from(token, 'base64').toString('utf8')).toBe(`${WEB_CLIENT.clientId}:${WEB_CLIENT.secret}`);
    }
  });

  it.each(looseTokens)('POST /session with the token %s answers 401 unauthorized', async (_name, token) => {
    const answer = await createSession(emulator.url, WEB_CLIENT, undefined, { authorization: `Basic ${token}` });
    expect(answer.status).toBe(401);
    expect(answer.body).toMatchObject({ isSuccess: false, errorCode: 'unauthorized' });
  });

  it.each(looseTokens)('GET /session/{id} with the token %s answers 401 unauthorized', async (_name, token) => {
    const { sessionId } = await newSession(emulator.url, WEB_CLIENT);
    const answer = await readSession(emulator.url, WEB_CLIENT, sessionId, `Basic ${token}`);
    expect(answer.status).toBe(401);
    expect(answer.body).toMatchObject({ isSuccess: false, errorCode: 'unauthorized' });
  });

  it('accepts the standard token', async () => {
    const answer = await createSession(emulator.url, WEB_CLIENT, undefined, { authorization: `Basic ${canonical}` });
    expect(answer.status).toBe(200);
  });
});
