/**
 * Which failed creates certainly made no session (so the start is given back), against a scripted
 * service on loopback: a definite 4xx refusal, a create validation error under any status, and a
 * 429 through every try do; a 408, a 5xx, a refusal with isSuccess false under 200 whose code the
 * interface does not name, and a refusal met on a retry after a try that may have created the
 * session (a 5xx, one still in flight) do not.
 */
import http from 'node:http';
import { afterEach, expect, it } from 'vitest';
import { createVerifyClient } from '../../middleware/client/client.ts';
import { createdNoSession } from '../../middleware/client/created-no-session.ts';
import { isKitError, KitErrorCode } from '../../middleware/errors.ts';
import type { CreateSessionInput } from '../../middleware/types.ts';
import { closeServer, listen } from '../support/listen.ts';

const input: CreateSessionInput = {
  returnUrl: 'http://localhost:3000/verify/return',
  destination: '+15550100001',
  operationSensitivity: 'normal',
  userRef: 'user-1',
  state: 'state-1',
  platform: 'web',
};

type Answer = [status: number, body: Record<string, unknown>];
const servers: http.Server[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map(closeServer));
});

/** The error of one create against a service answering `answers` in turn (the last one repeated). */
async function createFailure(answers: Answer[]): Promise<unknown> {
  let tries = 0;
  const server = http.createServer(async (req, res) => {
    for await (const _chunk of req);
    const [status, body] = answers[Math.min(tries++, answers.length - 1)]!;
    res.writeHead(status, { 'content-type': 'application/json', 'retry-after': '0' });
    res.end(JSON.stringify(body));
  });
  const port = await listen(server);
  servers.push(server);
  const client = createVerifyClient({
    baseUrl: `http://127.0.0.1:${port}`,
    clientId: 'client-1',
    clientSecret: 'sk_test_created-no-session-0123456789',
    retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20 },
  });
  try {
    return await client.createSession(input, 'key-1').then(
      () => expect.fail('the create succeeded'),
      (error: unknown) => error,
    );
  } finally {
    await client.close();
  }
}

const refusal = (status: number, errorCode: string): Answer => [status, { isSuccess: false, errorCode }];

it('a definite 4xx refusal made no session, and keeps the code and status it is answered by', async () => {
  for (const [status, errorCode] of [
    [400, 'destination_required'],
    [400, 'invalid_return_url'],
    [400, 'invalid_channel'],
    [401, 'unauthorized'],
    [404, 'not_found'],
    [422, 'idempotency_key_reused'],
  ] as const) {
    const error = await createFailure([refusal(status, errorCode)]);
    expect(isKitError(error, KitErrorCode.ServiceRejected), errorCode).toBe(true);
    expect(error, errorCode).toMatchObject({ serviceStatus: status, serviceErrorCode: errorCode });
    expect(createdNoSession(error), errorCode).toBe(true);
  }
});

it('a 429 through every try made no session', async () => {
  const error = await createFailure([[429, {}]]);
  expect(isKitError(error, KitErrorCode.ServiceBusy)).toBe(true);
  expect(createdNoSession(error)).toBe(true);
});

it('a create validation error under any status the service may give it made no session: the interface leaves its status open', async () => {
  for (const status of [200, 400, 409, 422]) {
    for (const errorCode of [
      'invalid_return_url',
      'invalid_channel',
      'destination_required',
      'invalid_operation_sensitivity',
    ]) {
      const error = await createFailure([refusal(status, errorCode)]);
      expect(error, `${status} ${errorCode}`).toMatchObject({ serviceStatus: status, serviceErrorCode: errorCode });
      expect(createdNoSession(error), `${status} ${errorCode}`).toBe(true);
    }
  }
});

it('a 408, a 5xx through every try, or a refusal under 200 whose code the interface does not name may have made one', async () => {
  for (const answers of [[refusal(408, 'timeout')], [refusal(503, 'service_unavailable')], [refusal(200, 'odd')]]) {
    const error = await createFailure(answers);
    expect(createdNoSession(error), JSON.stringify(answers)).toBe(false);
  }
});

it('a refusal met on the retry after a 5xx, or after a try still in flight, may have made one: the earlier try is its cause', async () => {
  for (const first of [refusal(503, 'service_unavailable'), refusal(409, 'idempotency_request_in_flight')]) {
    const error = await createFailure([first, refusal(400, 'destination_required')]);
    // The refusal is answered as it is without the earlier try...
    expect(error).toMatchObject({ code: KitErrorCode.ServiceRejected, serviceStatus: 400 });
    // ...but is no proof that nothing was created.
    expect((error as Error).cause, first[1].errorCode as string).toMatchObject({
      code: KitErrorCode.ServiceUnavailable,
    });
    expect(createdNoSession(error)).toBe(false);
  }
});
