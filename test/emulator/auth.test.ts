import { describe, expect, it } from 'vitest';
import {
  OTHER_CLIENT,
  WEB_CLIENT,
  basicAuth,
  createSession,
  newSession,
  readSession,
  useTestEmulator,
} from '../support/emulator.ts';

const emulator = useTestEmulator();

const wrongCredentials: Array<[string, string | null]> = [
  ['no Authorization header', null],
  ['a wrong secret', basicAuth({ clientId: WEB_CLIENT.clientId, secret: 'wrong-secret' })],
  ['another client’s secret', basicAuth({ clientId: WEB_CLIENT.clientId, secret: OTHER_CLIENT.secret })],
  ['an unknown client id', basicAuth({ clientId: 'nobody', secret: WEB_CLIENT.secret })],
  ['an empty secret', basicAuth({ clientId: WEB_CLIENT.clientId, secret: '' })],
  ['the Bearer scheme', `Bearer ${WEB_CLIENT.secret}`],
  ['credentials without a colon', `Basic ${Buffer.from(WEB_CLIENT.clientId).toString('base64')}`],
];

describe('Basic auth on POST /session', () => {
  it.each(wrongCredentials)('answers 401 unauthorized for %s', async (_name, authorization) => {
    const answer = await createSession(emulator.url, WEB_CLIENT, undefined, { authorization });
    expect(answer.status).toBe(401);
    expect(answer.body).toMatchObject({ isSuccess: false, errorCode: 'unauthorized' });
    expect(answer.headers.get('www-authenticate')).toMatch(/^Basic /);
  });

  it('never echoes the secret that was sent', async () => {
    const attempted = 'my-very-secret-attempt';
    const response = await fetch(`${emulator.url}/session`, {
      method: 'POST',
      headers: {
        authorization: basicAuth({ clientId: WEB_CLIENT.clientId, secret: attempted }),
        'content-type': 'application/json',
      },
      body: '{}',
    });
    const text = await response.text();
    expect(response.status).toBe(401);
    expect(text).not.toContain(attempted);
    expect(text).not.toContain(WEB_CLIENT.secret);
  });

  it('accepts the client’s own credentials', async () => {
    expect((await createSession(emulator.url, WEB_CLIENT)).status).toBe(200);
  });
});

describe('Basic auth on GET /session/{id}', () => {
  it.each(wrongCredentials)('answers 401 unauthorized for %s', async (_name, authorization) => {
    const { sessionId } = await newSession(emulator.url, WEB_CLIENT);
    const answer = await readSession(emulator.url, WEB_CLIENT, sessionId, authorization);
    expect(answer.status).toBe(401);
    expect(answer.body).toMatchObject({ isSuccess: false, errorCode: 'unauthorized' });
  });
});

describe('a browser calling the service directly fails CORS', () => {
  it('grants no cross-origin access on a preflight or on the request', async () => {
    const preflight = await fetch(`${emulator.url}/session`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://localhost:3999',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type',
      },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    expect(preflight.headers.get('access-control-allow-headers')).toBeNull();
    const answer = await createSession(emulator.url, WEB_CLIENT);
    expect(answer.headers.get('access-control-allow-origin')).toBeNull();
  });
});
