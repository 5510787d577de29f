/**
 * The spec says a failing response carries an `errorCode` and states nothing else of its body. The
 * emulator adds `isSuccess: false` and a `message`, and a test can make the backend API's error
 * bodies carry `errorCode` alone (`injectFaults({ bareErrors: true })`), so an integration that
 * needs `isSuccess: false` or a `message` to see a failure is found here rather than against the
 * service.
 */
import { describe, expect, it } from 'vitest';
import {
  WEB_CLIENT,
  basicAuth,
  createSession,
  newSession,
  readSession,
  sessionBody,
  useTestEmulator,
} from '../support/emulator.ts';

const emulator = useTestEmulator({}, { resetEach: true });

describe('error bodies beyond errorCode, which the spec leaves open', () => {
  it('carry isSuccess false and a message by default', async () => {
    const answer = await createSession(emulator.url, WEB_CLIENT, sessionBody(WEB_CLIENT, { channel: 'voice' }));
    expect(answer.body).toEqual({ isSuccess: false, errorCode: 'invalid_channel', message: expect.any(String) });
  });

  it('carry errorCode alone on every backend API error once a test asks', async () => {
    expect((await emulator.control.injectFaults({ bareErrors: true })).bareErrors).toBe(true);
    const validation = await createSession(emulator.url, WEB_CLIENT, sessionBody(WEB_CLIENT, { channel: 'voice' }));
    expect([validation.status, validation.body]).toEqual([400, { errorCode: 'invalid_channel' }]);
    const unauthorized = await createSession(emulator.url, WEB_CLIENT, undefined, { authorization: null });
    expect([unauthorized.status, unauthorized.body]).toEqual([401, { errorCode: 'unauthorized' }]);
    const first = sessionBody(WEB_CLIENT);
    await createSession(emulator.url, WEB_CLIENT, first, { idempotencyKey: 'k' });
    const reused = await createSession(emulator.url, WEB_CLIENT, sessionBody(WEB_CLIENT), { idempotencyKey: 'k' });
    expect([reused.status, reused.body]).toEqual([422, { errorCode: 'idempotency_key_reused' }]);
    await emulator.control.injectFaults({ statusFailures: 1 });
    const { sessionId } = await newSession(emulator.url, WEB_CLIENT);
    const failedRead = await readSession(emulator.url, WEB_CLIENT, sessionId);
    expect([failedRead.status, failedRead.body]).toEqual([503, { errorCode: 'service_unavailable' }]);
    const read = await readSession(emulator.url, WEB_CLIENT, sessionId);
    expect(read.body).toMatchObject({ isSuccess: true, status: 'pending' }); // successes keep isSuccess
  });

  it('carry errorCode alone also where the API answers before its route runs: a path not valid percent-encoding, a path under /session it does not have', async () => {
    await emulator.control.injectFaults({ bareErrors: true });
    const headers = { authorization: basicAuth(WEB_CLIENT) };
    const undecodable = await fetch(`${emulator.url}/session/%E0%A4%A`, { headers });
    expect([undecodable.status, await undecodable.json()]).toEqual([400, { errorCode: 'invalid_request' }]);
    const trailingSlash = await fetch(`${emulator.url}/session/`, { headers });
    expect([trailingSlash.status, await trailingSlash.json()]).toEqual([404, { errorCode: 'not_found' }]);
  });

  it('leaves the control API and unknown paths as they were, and reset restores the full body', async () => {
    await emulator.control.injectFaults({ bareErrors: true });
    const unknownPath = (await (await fetch(`${emulator.url}/nowhere`)).json()) as object;
    expect(unknownPath).toMatchObject({ isSuccess: false, errorCode: 'not_found' });
    expect((await emulator.control.setFaults({ bareErrors: 'yes' })).status).toBe(400);
    await emulator.control.reset();
    const answer = await createSession(emulator.url, WEB_CLIENT, sessionBody(WEB_CLIENT, { channel: 'voice' }));
    expect(answer.body).toMatchObject({ isSuccess: false, message: expect.any(String) });
  });
});
