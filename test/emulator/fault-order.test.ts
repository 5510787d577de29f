/**
 * The emulator's README: on POST /session, `createFailures` and `resetPhase: 'before'` act after
 * authentication, the create rate limit and the parsing of a JSON body, and before everything
 * else; a status read's errors are 400 (its path decoded before the credentials), 401 and 429
 * besides the injected faults.
 */
import { describe, expect, it } from 'vitest';
import { WEB_CLIENT, basicAuth, sessionBody, useTestEmulator } from '../support/emulator.ts';

const emulator = useTestEmulator({}, { resetEach: true });

async function create(
  body: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; errorCode?: string }> {
  const response = await fetch(`${emulator.url}/session`, {
    method: 'POST',
    headers: { authorization: basicAuth(WEB_CLIENT), 'content-type': 'application/json', ...headers },
    body,
  });
  return { status: response.status, errorCode: ((await response.json()) as { errorCode?: string }).errorCode };
}

async function read(path: string, headers: Record<string, string> = { authorization: basicAuth(WEB_CLIENT) }) {
  const response = await fetch(`${emulator.url}${path}`, { headers });
  return { status: response.status, errorCode: ((await response.json()) as { errorCode?: string }).errorCode };
}

describe('order on POST /session', () => {
  it('answers bad credentials, the rate limit and malformed JSON before an injected failure', async () => {
    await emulator.control.injectFaults({ createFailures: 10 });
    expect(await create('{not json', { authorization: 'Basic eDp5' })).toMatchObject({ status: 401 });
    expect(await create('{not json')).toMatchObject({ status: 400, errorCode: 'invalid_request' });
    await emulator.control.setRateLimits({ createsPerSecond: 1 });
    expect(await create('{}')).toMatchObject({ status: 503, errorCode: 'service_unavailable' });
    expect(await create('{}')).toMatchObject({ status: 429, errorCode: 'rate_limited' });
  });

  it('answers an injected failure before the content type, the key and the fields are checked', async () => {
    await emulator.control.injectFaults({ createFailures: 1 });
    const wrong = await create(JSON.stringify(sessionBody(WEB_CLIENT)), {
      'content-type': 'text/plain',
      'idempotency-key': '',
    });
    expect(wrong).toMatchObject({ status: 503, errorCode: 'service_unavailable' });
  });
});

describe('a status read', () => {
  it('answers 401, 400 for a path that is not percent-encoding and 429 beyond the rate limit', async () => {
    expect(await read('/session/abc', {})).toMatchObject({ status: 401, errorCode: 'unauthorized' });
    expect(await read('/session/%E0%A4%A')).toMatchObject({ status: 400, errorCode: 'invalid_request' });
    // The path is decoded before the credentials are read.
    expect(await read('/session/%E0%A4%A', {})).toMatchObject({ status: 400, errorCode: 'invalid_request' });
    await emulator.control.setRateLimits({ statusReadsPerSecond: 1 });
    expect(await read('/session/abc')).toMatchObject({ status: 200 });
    expect(await read('/session/abc')).toMatchObject({ status: 429, errorCode: 'rate_limited' });
  });
});
