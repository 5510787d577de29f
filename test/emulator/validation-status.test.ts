/**
 * The spec names four create errors (invalid_return_url, invalid_channel, destination_required,
 * invalid_operation_sensitivity) but not their HTTP status. The emulator answers 400, and a test
 * can make it answer another 4xx, or 200 with `isSuccess: false` (`injectFaults({ validationStatus })`),
 * so an integration that keys on 400, or on any 4xx, rather than on the errorCode is found here
 * rather than against the service.
 */
import { describe, expect, it } from 'vitest';
import { WEB_CLIENT, createSession, sessionBody, useTestEmulator } from '../support/emulator.ts';

const emulator = useTestEmulator({}, { resetEach: true });

const specErrors: Array<[string, Record<string, unknown>]> = [
  ['invalid_return_url', { returnUrl: `${WEB_CLIENT.returnUrl}/` }],
  ['invalid_channel', { channel: 'voice' }],
  ['destination_required', { destination: 'not a number' }],
  ['invalid_operation_sensitivity', { operationSensitivity: 'high' }],
];

describe('the HTTP status of the spec’s create errors, which the spec leaves open', () => {
  it.each(specErrors)('%s answers 400 by default', async (errorCode, override) => {
    const answer = await createSession(emulator.url, WEB_CLIENT, sessionBody(WEB_CLIENT, override));
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ isSuccess: false, errorCode });
  });

  it.each(specErrors)('%s answers the status a test chose with validationStatus', async (errorCode, override) => {
    expect((await emulator.control.injectFaults({ validationStatus: 422 })).validationStatus).toBe(422);
    const answer = await createSession(emulator.url, WEB_CLIENT, sessionBody(WEB_CLIENT, override));
    expect(answer.status).toBe(422);
    expect(answer.body).toMatchObject({ isSuccess: false, errorCode });
    expect((await emulator.control.stats()).creates).toBe(0);
  });

  it('leaves the emulator’s own invalid_request at 400, and reset restores 400', async () => {
    await emulator.control.injectFaults({ validationStatus: 409 });
    const own = await createSession(emulator.url, WEB_CLIENT, sessionBody(WEB_CLIENT, { state: '' }));
    expect(own.status).toBe(400);
    expect(own.body).toMatchObject({ errorCode: 'invalid_request' });
    await emulator.control.reset();
    const answer = await createSession(emulator.url, WEB_CLIENT, sessionBody(WEB_CLIENT, { channel: 'voice' }));
    expect(answer.status).toBe(400);
  });

  it.each(specErrors)(
    '%s answers 200 with isSuccess false when a test chose 200: a refusal told by its body alone',
    async (errorCode, override) => {
      expect((await emulator.control.injectFaults({ validationStatus: 200 })).validationStatus).toBe(200);
      const answer = await createSession(emulator.url, WEB_CLIENT, sessionBody(WEB_CLIENT, override), {
        idempotencyKey: `key-${errorCode}`,
      });
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ isSuccess: false, errorCode, message: expect.any(String) });
      expect(answer.headers.get('idempotent-replayed')).toBeNull();
      expect(await emulator.control.stats()).toMatchObject({ creates: 0, smsSent: 0 });
      // Not stored as a success: the key is free for a valid create.
      const created = await createSession(emulator.url, WEB_CLIENT, sessionBody(WEB_CLIENT), {
        idempotencyKey: `key-${errorCode}`,
      });
      expect(created.body).toMatchObject({ isSuccess: true });
      expect(created.headers.get('idempotent-replayed')).toBeNull();
    },
  );

  it.each([201, 299, 399, 500, 422.5, '422'])(
    'refuses validationStatus %j with 400 and keeps the one in force',
    async (value) => {
      expect((await emulator.control.setFaults({ validationStatus: value })).status).toBe(400);
      const faults = (await (await fetch(`${emulator.url}/_control/faults`)).json()) as { faults: object };
      expect(faults.faults).toMatchObject({ validationStatus: 400 });
    },
  );
});
