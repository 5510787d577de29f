/**
 * A failing response carries an `errorCode` field (the service's error shape), never Express's
 * page with a stack: a create body nested too deeply to fingerprint for its Idempotency-Key is a
 * 400 `invalid_request`, and it claims nothing (the same key with a proper body then creates).
 */
import { describe, expect, it } from 'vitest';
import { WEB_CLIENT, basicAuth, createSession, useTestEmulator } from '../support/emulator.ts';

const emulator = useTestEmulator({}, { resetEach: true });

describe('spec Errors: "A failing response carries an `errorCode` field."', () => {
  it('a deeply nested JSON body sent with an Idempotency-Key is refused with a JSON errorCode, not a 500 HTML stack trace', async () => {
    // 8000 nested arrays is 16 000 bytes, under the emulator's own 16 kB body limit.
    const depth = 8000;
    const response = await fetch(`${emulator.url}/session`, {
      method: 'POST',
      headers: {
        authorization: basicAuth(WEB_CLIENT),
        'content-type': 'application/json',
        'idempotency-key': 'deep-body',
      },
      body: '['.repeat(depth) + ']'.repeat(depth),
    });
    const text = await response.text();
    expect(text).not.toContain('RangeError'); // no stack trace (with file paths) in an API answer
    expect(response.status).toBeLessThan(500);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(JSON.parse(text)).toMatchObject({ isSuccess: false, errorCode: 'invalid_request' });
    // Nothing was claimed under the key: a proper create with it succeeds.
    const created = await createSession(emulator.url, WEB_CLIENT, undefined, { idempotencyKey: 'deep-body' });
    expect(created.status).toBe(200);
  });
});
