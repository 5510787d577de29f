import { describe, expect, it } from 'vitest';
import { OTHER_CLIENT, WEB_CLIENT, createSession, sessionBody, useTestEmulator } from '../support/emulator.ts';

const emulator = useTestEmulator({}, { resetEach: true });

const create = (
  idempotencyKey: string,
  body: unknown = sessionBody(WEB_CLIENT, { state: 'fixed-state' }),
  client = WEB_CLIENT,
) => createSession(emulator.url, client, body, { idempotencyKey });

describe('spec Idempotency rule 1: an Idempotency-Key is at most 255 characters', () => {
  it('accepts 255 characters', async () => {
    expect((await create('k'.repeat(255))).status).toBe(200);
  });

  it('refuses 256 characters with 400 invalid_idempotency_key and acts on nothing', async () => {
    const answer = await create('k'.repeat(256));
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ isSuccess: false, errorCode: 'invalid_idempotency_key' });
    expect((await emulator.control.stats()).smsSent).toBe(0);
  });
});

describe('spec Idempotency rule 2: keys are scoped to the client and retained 24 hours', () => {
  it('the same key from another client is a different key', async () => {
    const mine = await create('shared-key');
    const theirs = await create('shared-key', sessionBody(OTHER_CLIENT), OTHER_CLIENT);
    expect(theirs.status).toBe(200);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(theirs.body.sessionId).not.toBe(mine.body.sessionId);
  });

  it('replays within 24 hours and forgets the key after', async () => {
    const first = await create('day-key');
    await emulator.control.advanceClock(24 * 3600 - 60);
    const withinDay = await create('day-key');
    expect(withinDay.headers.get('idempotent-replayed')).toBe('true');
    expect(withinDay.body.sessionId).toBe(first.body.sessionId);

    await emulator.control.advanceClock(120);
    const afterDay = await create('day-key');
    expect(afterDay.status).toBe(200);
    expect(afterDay.headers.get('idempotent-replayed')).toBeNull();
    expect(afterDay.body.sessionId).not.toBe(first.body.sessionId);
    expect((await emulator.control.stats()).smsByIdempotencyKey['day-key']).toBe(2);
  });
});

describe('spec Idempotency rule 3: only a successful response is stored', () => {
  it('a validation failure is retryable with the same key and another payload', async () => {
    const failed = await create('retry-key', sessionBody(WEB_CLIENT, { channel: 'email' }));
    expect(failed.body.errorCode).toBe('invalid_channel');
    const retried = await create('retry-key');
    expect(retried.status).toBe(200);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
  });

  it('a service failure is retryable with the same key', async () => {
    await emulator.control.setFaults({ createFailures: 1 });
    expect((await create('outage-key')).status).toBe(503);
    const retried = await create('outage-key');
    expect(retried.status).toBe(200);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
  });
});

describe('spec Idempotency rule 4: same key and payload after a success replays the original', () => {
  it('replays the original body with Idempotent-Replayed: true and sends no second SMS', async () => {
    const first = await create('replay-key');
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const second = await create('replay-key');
    expect(second.status).toBe(200);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body).toEqual(first.body);
    const stats = await emulator.control.stats();
    expect(stats.smsByIdempotencyKey['replay-key']).toBe(1);
    expect(stats.replays).toBe(1);
    expect(await emulator.control.outbox()).toHaveLength(1);
  });

  it('compares payloads as canonical JSON: key order does not matter', async () => {
    const body = sessionBody(WEB_CLIENT);
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    const first = await create('order-key', body);
    const second = await create('order-key', reordered);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body.sessionId).toBe(first.body.sessionId);
  });
});

describe('the create answer carries the handoff, a single-use capability', () => {
  it('is never stored by a cache: Cache-Control no-store on the answer and on its replay', async () => {
    const first = await create('store-key');
    const replayed = await create('store-key');
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body.handoff).toBe(first.body.handoff);
    expect(first.headers.get('cache-control')).toBe('no-store');
    expect(replayed.headers.get('cache-control')).toBe('no-store');
  });
});

describe('spec Idempotency rule 5: the same key while the first request runs gives 409', () => {
  it('answers 409 idempotency_request_in_flight, then the first completes and a retry replays it', async () => {
    await emulator.control.setFaults({ createDelayMs: 600 });
    const firstPromise = create('slow-key');
    await new Promise((resolve) => setTimeout(resolve, 150));
    const concurrent = await create('slow-key');
    expect(concurrent.status).toBe(409);
    expect(concurrent.body).toMatchObject({ isSuccess: false, errorCode: 'idempotency_request_in_flight' });
    const first = await firstPromise;
    expect(first.status).toBe(200);
    await emulator.control.setFaults({ createDelayMs: 0 });
    const retry = await create('slow-key');
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body.sessionId).toBe(first.body.sessionId);
    expect((await emulator.control.stats()).smsSent).toBe(1);
  });
});

describe('spec Idempotency rule 6: the same key with a different payload gives 422', () => {
  it('answers 422 idempotency_key_reused and sends no SMS', async () => {
    await create('reuse-key');
    const answer = await create('reuse-key', sessionBody(WEB_CLIENT, { state: 'another-state' }));
    expect(answer.status).toBe(422);
    expect(answer.body).toMatchObject({ isSuccess: false, errorCode: 'idempotency_key_reused' });
    expect((await emulator.control.stats()).smsSent).toBe(1);
  });
});
