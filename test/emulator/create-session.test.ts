import { describe, expect, it, vi } from 'vitest';
import { startEmulator } from '../../emulator/index.ts';
import {
  MOBILE_CLIENT,
  OTHER_CLIENT,
  WEB_CLIENT,
  basicAuth,
  createSession,
  sessionBody,
  useTestEmulator,
} from '../support/emulator.ts';
import { watchUnhandledRejections } from '../support/unhandled.ts';

const emulator = useTestEmulator({}, { resetEach: true });

async function expectRejected(body: unknown, errorCode: string, client = WEB_CLIENT) {
  const answer = await createSession(emulator.url, client, body);
  expect(answer.status).toBe(400);
  expect(answer.body).toEqual({ isSuccess: false, errorCode, message: expect.any(String) });
  expect((await emulator.control.stats()).creates).toBe(0);
  expect(await emulator.control.outbox()).toEqual([]);
}

describe('POST /session success response', () => {
  it('answers 200 with isSuccess, sessionId, verifyUrl, handoff, expiresInSeconds 120 and binding form_post', async () => {
    const answer = await createSession(emulator.url, WEB_CLIENT);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      isSuccess: true,
      sessionId: expect.any(String),
      verifyUrl: `${emulator.url}/verify`,
      handoff: expect.any(String),
      expiresInSeconds: 120,
      binding: 'form_post',
    });
  });

  it('verifyUrl carries no flow value and the handoff is an unguessable token (>= 256 bits)', async () => {
    const { body } = await createSession(emulator.url, WEB_CLIENT);
    const verifyUrl = new URL(body.verifyUrl as string);
    expect(verifyUrl.search).toBe('');
    expect(body.verifyUrl).not.toContain(body.sessionId as string);
    expect(body.verifyUrl).not.toContain(body.handoff as string);
    expect(Buffer.from(body.handoff as string, 'base64url').length).toBeGreaterThanOrEqual(32);
  });

  it('issues a distinct sessionId and handoff per session', async () => {
    const a = await createSession(emulator.url, WEB_CLIENT);
    const b = await createSession(emulator.url, WEB_CLIENT);
    expect(a.body.sessionId).not.toBe(b.body.sessionId);
    expect(a.body.handoff).not.toBe(b.body.handoff);
  });

  it('sends an SMS with a 6-digit code to the destination and prints it, the number masked', async () => {
    const { body } = await createSession(
      emulator.url,
      WEB_CLIENT,
      sessionBody(WEB_CLIENT, { destination: '+447700900123' }),
    );
    const messages = await emulator.control.outbox();
    expect(messages).toEqual([
      {
        to: '+447700900123',
        code: expect.stringMatching(/^\d{6}$/),
        sessionId: body.sessionId,
        sentAt: expect.any(String),
      },
    ]);
    // The full number is in the outbox (and the dev inbox page), never in a log line.
    expect(emulator.logLines.at(-1)).toBe(
      `SMS to ••\u00a023: your code is ${messages[0]?.code} (session ${String(body.sessionId)})`,
    );
  });

  it('prints each text on console.log by default, the number masked there too', async () => {
    const printed: string[] = [];
    const consoleLog = vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
      printed.push(args.map(String).join(' '));
    });
    const ownLog = await startEmulator({ port: 0, clients: [WEB_CLIENT], control: false });
    try {
      const { body } = await createSession(
        ownLog.url,
        WEB_CLIENT,
        sessionBody(WEB_CLIENT, { destination: '+447700900123' }),
      );
      const line = printed.find((text) => text.includes(String(body.sessionId)));
      expect(line).toMatch(/^SMS to ••\u00a023: your code is \d{6} \(session ses_/);
      expect(printed.join('\n')).not.toMatch(/7700\s?900\s?123/);
    } finally {
      consoleLog.mockRestore();
      await ownLog.close();
    }
  });
});

describe('returnUrl must equal the registered URL byte for byte', () => {
  const registered = WEB_CLIENT.returnUrl; // http://localhost:3999/verify/return
  it.each([
    ['scheme https vs http', registered.replace('http:', 'https:')],
    ['host www vs bare', registered.replace('localhost', 'www.localhost')],
    ['host 127.0.0.1 vs localhost', registered.replace('localhost', '127.0.0.1')],
    ['another port', registered.replace(':3999', ':3998')],
    ['port left out', registered.replace(':3999', '')],
    ['path case', registered.replace('/verify/return', '/Verify/return')],
    ['host case', registered.replace('localhost', 'LOCALHOST')],
    ['trailing slash added', `${registered}/`],
    ['query appended', `${registered}?next=/admin`],
    ['empty query appended', `${registered}?`],
    ['fragment appended', `${registered}#x`],
    ['prefix only', 'http://localhost:3999/verify'],
    ['another client’s URL', OTHER_CLIENT.returnUrl],
  ])('rejects %s with invalid_return_url', async (_name, returnUrl) => {
    await expectRejected(sessionBody(WEB_CLIENT, { returnUrl }), 'invalid_return_url');
  });

  it('rejects a missing returnUrl with invalid_return_url', async () => {
    await expectRejected(sessionBody(WEB_CLIENT, { returnUrl: undefined }), 'invalid_return_url');
  });

  it('accepts the exact registered URL', async () => {
    expect(
      (await createSession(emulator.url, WEB_CLIENT, sessionBody(WEB_CLIENT, { returnUrl: registered }))).status,
    ).toBe(200);
  });
});

describe('platform changes only which returnUrl schemes are accepted', () => {
  it('defaults to web: a web client may leave platform out', async () => {
    expect(
      (await createSession(emulator.url, WEB_CLIENT, sessionBody(WEB_CLIENT, { platform: undefined }))).status,
    ).toBe(200);
  });

  it('mobile accepts the registered custom-scheme deep link', async () => {
    expect(
      (await createSession(emulator.url, MOBILE_CLIENT, sessionBody(MOBILE_CLIENT, { platform: 'mobile' }))).status,
    ).toBe(200);
  });

  it('web refuses a deep link even when it is the registered URL', async () => {
    await expectRejected(sessionBody(MOBILE_CLIENT, { platform: 'web' }), 'invalid_return_url', MOBILE_CLIENT);
  });

  it('mobile refuses an http(s) URL even when it is the registered URL', async () => {
    await expectRejected(sessionBody(WEB_CLIENT, { platform: 'mobile' }), 'invalid_return_url');
  });

  it.each(['Web', 'ios', 'android', ''])('rejects the spelling %j with invalid_request', async (platform) => {
    await expectRejected(sessionBody(WEB_CLIENT, { platform }), 'invalid_request');
  });
});

describe('field rules', () => {
  it.each([['email'], ['SMS'], ['voice'], [undefined], [1]])('channel %j gives invalid_channel', async (channel) => {
    await expectRejected(sessionBody(WEB_CLIENT, { channel }), 'invalid_channel');
  });

  it.each([
    [undefined],
    [''],
    ['5551234567'],
    ['+0123456789'],
    ['+1 555 123 4567'],
    ['+155512'],
    ['+1234567890123456'],
    ['tel:+15551234567'],
    [15551234567],
  ])('destination %j gives destination_required', async (destination) => {
    await expectRejected(sessionBody(WEB_CLIENT, { destination }), 'destination_required');
  });

  it.each([['high'], ['Normal'], [''], [undefined], [true]])(
    'operationSensitivity %j gives invalid_operation_sensitivity',
    async (operationSensitivity) => {
      await expectRejected(sessionBody(WEB_CLIENT, { operationSensitivity }), 'invalid_operation_sensitivity');
    },
  );

  it.each(['normal', 'sensitive'])('operationSensitivity %s is accepted', async (operationSensitivity) => {
    expect(
      (await createSession(emulator.url, WEB_CLIENT, sessionBody(WEB_CLIENT, { operationSensitivity }))).status,
    ).toBe(200);
  });

  it.each(['userRef', 'state'])('%s must be a string of 1..512 characters (invalid_request)', async (field) => {
    for (const value of [undefined, '', 'x'.repeat(513), 42]) {
      await expectRejected(sessionBody(WEB_CLIENT, { [field]: value }), 'invalid_request');
    }
    expect(
      (await createSession(emulator.url, WEB_CLIENT, sessionBody(WEB_CLIENT, { [field]: 'x'.repeat(512) }))).status,
    ).toBe(200);
  });
});

describe('the body must be a JSON object', () => {
  it('refuses a form-encoded body with invalid_request', async () => {
    const response = await fetch(`${emulator.url}/session`, {
      method: 'POST',
      headers: { authorization: basicAuth(WEB_CLIENT), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(sessionBody(WEB_CLIENT) as Record<string, string>).toString(),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ isSuccess: false, errorCode: 'invalid_request' });
  });

  it('refuses malformed JSON and a JSON array with invalid_request', async () => {
    for (const raw of ['{"returnUrl":', JSON.stringify([sessionBody(WEB_CLIENT)])]) {
      const response = await fetch(`${emulator.url}/session`, {
        method: 'POST',
        headers: { authorization: basicAuth(WEB_CLIENT), 'content-type': 'application/json' },
        body: raw,
      });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ isSuccess: false, errorCode: 'invalid_request' });
    }
  });
});

describe('the caller’s log is its own code', () => {
  const throwing = useTestEmulator({
    log: () => {
      throw new Error('log sink down');
    },
  });
  const rejecting = useTestEmulator({ log: (() => Promise.reject(new Error('log sink down'))) as () => void });
  const unhandled = watchUnhandledRejections();

  it('a log that throws or rejects never turns a created session into an error: 200 and the SMS in the outbox', async () => {
    for (const running of [throwing, rejecting]) {
      const answer = await createSession(running.url, WEB_CLIENT);
      expect(answer.status).toBe(200);
      expect(await running.control.outbox()).toHaveLength(1);
    }
    expect(await unhandled.settled()).toEqual([]);
  });
});
