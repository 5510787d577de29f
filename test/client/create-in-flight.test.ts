/**
 * The interface: the same Idempotency-Key sent while the first request still runs answers 409
 * `idempotency_request_in_flight`, and the client waits and retries with the same key. Against the
 * emulator holding the first create longer than the client's headers timeout: the client keeps
 * asking within its budget and takes the replay, so the one text the service sent is the user's.
 */
import { expect, it } from 'vitest';
import { createVerifyClient } from '../../middleware/client/client.ts';
import type { CreateSessionInput } from '../../middleware/types.ts';
import { WEB_CLIENT, useTestEmulator } from '../support/emulator.ts';

const emulator = useTestEmulator({}, { resetEach: true });

const input: CreateSessionInput = {
  returnUrl: WEB_CLIENT.returnUrl,
  destination: '+15550100001',
  operationSensitivity: 'normal',
  userRef: 'user-1',
  state: 'state-in-flight',
  platform: 'web',
};

it('waits out a first create still running past its tries, within its budget, and takes its replay: one session, one text', async () => {
  // The first try times out after 500 ms; the service answers it only after 5 s. Five tries' backoff
  // (at most 0.2 + 0.4 + 0.8 + 1.6 s) is spent long before: every retry meanwhile meets 409.
  await emulator.control.injectFaults({ createDelayMs: 5000 });
  const client = createVerifyClient({
    baseUrl: emulator.url,
    clientId: WEB_CLIENT.clientId,
    clientSecret: WEB_CLIENT.secret,
    timeouts: { headersMs: 500 },
    retry: { budgetMs: 15_000 },
  });
  try {
    const created = await client.createSession(input, 'key-in-flight');
    expect(created.replayed).toBe(true);
    const stats = await emulator.control.stats();
    expect(stats.creates).toBe(1);
    expect(stats.smsByIdempotencyKey).toEqual({ 'key-in-flight': 1 });
  } finally {
    await client.close();
  }
});
