/**
 * Basic auth accepts one or more spaces between the scheme and the token.
 * Spec (hosted-sms-verification.md, "Authentication"): "Scheme | HTTP Basic with `client_id` as user
 * and the issued secret as password: `Authorization: Basic <BASE64(client_id:secret)>`."
 * HTTP Basic (RFC 7617) uses RFC 7235's credentials grammar:
 *   credentials = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
 * so one or more spaces may separate "Basic" from the token.
 */
import { describe, expect, it } from 'vitest';
import { WEB_CLIENT, createSession, readSession, useTestEmulator } from '../support/emulator.ts';

const emulator = useTestEmulator({}, { resetEach: true });
const token = Buffer.from(`${WEB_CLIENT.clientId}:${WEB_CLIENT.secret}`).toString('base64');

describe('spec Authentication: HTTP Basic (RFC 7235 "1*SP" between scheme and token68)', () => {
  it('accepts the right credentials when two spaces separate "Basic" from the token (status read)', async () => {
    const created = await createSession(emulator.url, WEB_CLIENT);
    expect(created.status).toBe(200);
    const read = await readSession(emulator.url, WEB_CLIENT, created.body.sessionId as string, `Basic  ${token}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ status: 'pending', state: expect.any(String) });
  });
});
