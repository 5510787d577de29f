/**
 * Idempotency keys are scoped to the calling client_id, so one key text used by two clients is two
 * keys. The control API's stats say how many texts each client's key sent
 * (`smsByClientIdempotencyKey`), so a test proving "no second SMS for my key" is not misled by another
 * client that happens to use the same key; `smsByIdempotencyKey` adds up every client's uses.
 */
import { describe, expect, it } from 'vitest';
import { OTHER_CLIENT, WEB_CLIENT, createSession, sessionBody, useTestEmulator } from '../support/emulator.ts';

const emulator = useTestEmulator({}, { resetEach: true });

describe('SMS per Idempotency-Key, per client', () => {
  it('counts one text for each client’s own key when two clients use the same key text', async () => {
    const key = 'order-1234';
    const mine = sessionBody(WEB_CLIENT);
    expect((await createSession(emulator.url, WEB_CLIENT, mine, { idempotencyKey: key })).status).toBe(200);
    expect(
      (await createSession(emulator.url, WEB_CLIENT, mine, { idempotencyKey: key })).headers.get('idempotent-replayed'),
    ).toBe('true');
    const theirs = await createSession(emulator.url, OTHER_CLIENT, sessionBody(OTHER_CLIENT), { idempotencyKey: key });
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();

    const stats = await emulator.control.stats();
    expect(stats.smsByClientIdempotencyKey).toEqual({
      [WEB_CLIENT.clientId]: { [key]: 1 },
      [OTHER_CLIENT.clientId]: { [key]: 1 },
    });
    expect(stats.smsByIdempotencyKey[key]).toBe(2);
    expect(stats.smsSent).toBe(2);
  });

  it('lists no client for creates without a key, and reset forgets the counts', async () => {
    await createSession(emulator.url, WEB_CLIENT);
    await createSession(emulator.url, WEB_CLIENT, undefined, { idempotencyKey: 'k' });
    expect((await emulator.control.stats()).smsByClientIdempotencyKey).toEqual({ [WEB_CLIENT.clientId]: { k: 1 } });
    await emulator.control.reset();
    expect((await emulator.control.stats()).smsByClientIdempotencyKey).toEqual({});
  });
});
