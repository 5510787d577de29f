/**
 * Spec, Idempotency rule 1: an `Idempotency-Key` is "any string ... at most 255 characters". A
 * header arrives as bytes; a key sent as UTF-8 is counted in characters, so a key of 255 "é" (510
 * bytes) is within the limit and one of 256 is not.
 */
import { describe, expect, it } from 'vitest';
import { WEB_CLIENT, basicAuth, sessionBody, useTestEmulator } from '../support/emulator.ts';

const emulator = useTestEmulator({}, { resetEach: true });
const body = JSON.stringify(sessionBody(WEB_CLIENT));

/** POST /session with the key's UTF-8 bytes as the header (fetch sends a header's characters as single bytes). */
async function createWithKey(key: string): Promise<{ status: number; replayed: string | null; errorCode?: string }> {
  const response = await fetch(`${emulator.url}/session`, {
    method: 'POST',
    headers: {
      authorization: basicAuth(WEB_CLIENT),
      'content-type': 'application/json',
      'idempotency-key': Buffer.from(key, 'utf8').toString('latin1'),
    },
    body,
  });
  const answer = (await response.json()) as { errorCode?: string };
  return {
    status: response.status,
    replayed: response.headers.get('idempotent-replayed'),
    errorCode: answer.errorCode,
  };
}

describe('an Idempotency-Key is at most 255 characters, counted as characters', () => {
  it.each([
    ['255 two-byte characters', 'é'.repeat(255)],
    ['255 four-byte characters', '🔑'.repeat(255)],
  ])('accepts %s and replays with the same key', async (_name, key) => {
    expect(await createWithKey(key)).toMatchObject({ status: 200, replayed: null });
    expect(await createWithKey(key)).toMatchObject({ status: 200, replayed: 'true' });
  });

  it('refuses 256 two-byte characters with 400 invalid_idempotency_key and sends nothing', async () => {
    expect(await createWithKey('é'.repeat(256))).toMatchObject({ status: 400, errorCode: 'invalid_idempotency_key' });
    expect((await emulator.control.stats()).smsSent).toBe(0);
  });
});

describe('the SMS stats name a key by its text', () => {
  it('count a key sent as UTF-8 under the key as written, for every client and for its own', async () => {
    const key = 'clé-🔑';
    expect(await createWithKey(key)).toMatchObject({ status: 200 });
    const stats = await emulator.control.stats();
    expect(stats.smsByIdempotencyKey).toEqual({ [key]: 1 });
    expect(stats.smsByClientIdempotencyKey).toEqual({ [WEB_CLIENT.clientId]: { [key]: 1 } });
  });
});
