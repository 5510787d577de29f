/**
 * The service's failing responses carry an `errorCode`. Requests node refuses before the
 * emulator's app sees them (headers past node's 16 KiB limit, bytes that are not HTTP) were answered
 * by node itself with no body, so a client tested against the emulator met an error without the
 * field it reads. They get the service's error body now, and create nothing.
 */
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { WEB_CLIENT, basicAuth, sessionBody, useTestEmulator } from '../support/emulator.ts';

const emulator = useTestEmulator({}, { resetEach: true });

/** Sends raw bytes and reads the whole answer until the server closes. */
function rawExchange(request: string): Promise<string> {
  const { hostname, port } = new URL(emulator.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(request));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

describe('requests node refuses before the app', () => {
  it('a session create with headers past the limit is 431 with the error body, and creates nothing', async () => {
    const response = await fetch(`${emulator.url}/session`, {
      method: 'POST',
      headers: {
        authorization: basicAuth(WEB_CLIENT),
        'content-type': 'application/json',
        'x-padding': 'p'.repeat(20_000),
      },
      body: JSON.stringify(sessionBody(WEB_CLIENT)),
    });
    expect(response.status).toBe(431);
    expect(await response.json()).toEqual({
      isSuccess: false,
      errorCode: 'request_headers_too_large',
      message: 'The request headers are larger than the service accepts.',
    });
    expect((await emulator.control.stats()).creates).toBe(0);
  });

  it('bytes that are not HTTP get 400 invalid_request with the error body, and the connection closes', async () => {
    const answer = await rawExchange('NOT HTTP AT ALL\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(answer).toContain('Connection: close');
    const body = answer.slice(answer.indexOf('\r\n\r\n') + 4);
    expect(JSON.parse(body)).toEqual({
      isSuccess: false,
      errorCode: 'invalid_request',
      message: 'The request is not valid HTTP.',
    });
  });
});
