import { describe, expect, it } from 'vitest';
import { OTHER_CLIENT, WEB_CLIENT, basicAuth, newSession, readSession, useTestEmulator } from '../support/emulator.ts';

const emulator = useTestEmulator({}, { resetEach: true });

describe('GET /session/{id} status read', () => {
  it('a new session reads pending with the echoed state and userRef and no reason', async () => {
    const created = await newSession(emulator.url, WEB_CLIENT, { userRef: 'user-7', state: 'st-1' });
    const answer = await readSession(emulator.url, WEB_CLIENT, created.sessionId);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      isSuccess: true,
      status: 'pending',
      state: 'st-1',
      userRef: 'user-7',
      assertionExchanged: false,
    });
    expect(answer.headers.get('cache-control')).toBe('no-store');
  });

  it('a verified session reads verified', async () => {
    const created = await newSession(emulator.url, WEB_CLIENT);
    await emulator.control.complete(created.sessionId, { outcome: 'verified' });
    expect((await readSession(emulator.url, WEB_CLIENT, created.sessionId)).body).toEqual({
      isSuccess: true,
      status: 'verified',
      state: created.state,
      userRef: created.userRef,
      assertionExchanged: false,
    });
  });

  it('a failed session carries its reason', async () => {
    const created = await newSession(emulator.url, WEB_CLIENT);
    await emulator.control.complete(created.sessionId, { outcome: 'failed', reason: 'device_changed' });
    expect((await readSession(emulator.url, WEB_CLIENT, created.sessionId)).body).toMatchObject({
      status: 'failed',
      reason: 'device_changed',
    });
  });

  it('a failed verification is not an HTTP error: 200, isSuccess true, no errorCode, its reason and both echoes', async () => {
    const created = await newSession(emulator.url, WEB_CLIENT, { userRef: 'user-9', state: 'st-9' });
    await emulator.control.complete(created.sessionId, { outcome: 'failed', reason: 'otp_locked' });
    const answer = await readSession(emulator.url, WEB_CLIENT, created.sessionId);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      isSuccess: true,
      status: 'failed',
      reason: 'otp_locked',
      state: 'st-9',
      userRef: 'user-9',
      assertionExchanged: false,
    });
  });
});

describe('pending for unknown ids and ids of other clients (no 404)', () => {
  it('an unknown id reads 200 pending and nothing else', async () => {
    const answer = await readSession(emulator.url, WEB_CLIENT, 'ses_does_not_exist');
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ isSuccess: true, status: 'pending' });
  });

  it('another client’s verified session reads exactly like an unknown id: nothing leaks', async () => {
    const theirs = await newSession(emulator.url, OTHER_CLIENT, { userRef: 'their-user', state: 'their-state' });
    await emulator.control.complete(theirs.sessionId, { outcome: 'verified' });
    const answer = await readSession(emulator.url, WEB_CLIENT, theirs.sessionId);
    const unknown = await readSession(emulator.url, WEB_CLIENT, 'ses_does_not_exist');
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual(unknown.body);
    expect(JSON.stringify(answer.body)).not.toMatch(/their-user|their-state|verified/);
    // The owner still reads it.
    expect((await readSession(emulator.url, OTHER_CLIENT, theirs.sessionId)).body.status).toBe('verified');
  });
});

describe('a session id whose percent-encoding cannot be decoded', () => {
  it('is 400 invalid_request saying the path is at fault, not a body the GET does not have', async () => {
    const response = await fetch(`${emulator.url}/session/ses_%E0%A4%A`, {
      headers: { authorization: basicAuth(WEB_CLIENT) },
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { errorCode?: string; message?: string };
    expect(body.errorCode).toBe('invalid_request');
    expect(body.message).toMatch(/path/);
    expect(body.message).not.toMatch(/body|JSON/);
  });
});

describe('an outcome is readable for 24 hours', () => {
  it('reads verified just before 24 h and like an unknown id after', async () => {
    const created = await newSession(emulator.url, WEB_CLIENT);
    await emulator.control.complete(created.sessionId, { outcome: 'verified' });
    await emulator.control.advanceClock(24 * 3600 - 1);
    expect((await readSession(emulator.url, WEB_CLIENT, created.sessionId)).body.status).toBe('verified');
    await emulator.control.advanceClock(2);
    expect((await readSession(emulator.url, WEB_CLIENT, created.sessionId)).body).toEqual({
      isSuccess: true,
      status: 'pending',
    });
  });
});
