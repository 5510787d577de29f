/**
 * The backend client against a scripted HTTP server on loopback: the misbehaviours a real service
 * (or a man in the middle) could show, which the spec-faithful emulator never does.
 */
import http from 'node:http';
import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { createVerifyClient, type VerifyClientOptions } from '../../middleware/client/client.ts';
import { isKitError, KitErrorCode } from '../../middleware/errors.ts';
import type { CreateSessionInput } from '../../middleware/types.ts';
import { closeServer, listen } from '../support/listen.ts';

const SECRET = 'sk_live_do-not-leak-7f3a9c';
const input: CreateSessionInput = {
  returnUrl: 'http://localhost:3000/verify/return',
  destination: '+15550100001',
  operationSensitivity: 'normal',
  userRef: 'user-1',
  state: 'state-1',
  platform: 'web',
};

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;
interface Scripted {
  url: string;
  requests: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }[];
}
const servers: http.Server[] = [];

async function scriptedServer(handlers: Handler[]): Promise<Scripted> {
  const requests: Scripted['requests'] = [];
  const server = http.createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    requests.push({ method: req.method!, url: req.url!, headers: req.headers, body });
    const handler = handlers[Math.min(requests.length, handlers.length) - 1]!;
    handler(req, res, body);
  });
  const port = await listen(server);
  servers.push(server);
  return { url: `http://127.0.0.1:${port}`, requests };
}

const json =
  (status: number, value: unknown, headers: Record<string, string> = {}): Handler =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(value));
  };
const created = {
  isSuccess: true,
  sessionId: 'sess-1',
  verifyUrl: 'https://verify.example/v',
  handoff: 'hx-1',
  expiresInSeconds: 120,
  binding: 'form_post',
};

function client(url: string, extra: Partial<VerifyClientOptions> = {}) {
  return createVerifyClient({
    baseUrl: url,
    clientId: 'client-1',
    clientSecret: SECRET,
    retry: { baseDelayMs: 5, maxDelayMs: 20 },
    ...extra,
  });
}

/** Everything an error could show anyone: message, stack, own properties, causes. */
function everythingAbout(error: unknown): string {
  return `${String(error)}\n${(error as Error).stack}\n${JSON.stringify(error)}\n${inspect(error, { depth: 10, showHidden: true })}`;
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map(closeServer));
});

describe('backend client protocol', () => {
  it('sends the credentials only as a Basic Authorization header, and the payload with channel sms', async () => {
    const service = await scriptedServer([json(200, created)]);
    await client(service.url).createSession(input, 'key-1');
    const [request] = service.requests;
    expect(request!.headers.authorization).toBe(`Basic ${Buffer.from(`client-1:${SECRET}`).toString('base64')}`);
    expect(request!.url).toBe('/session');
    expect(request!.url + request!.body).not.toContain(SECRET);
    expect(JSON.parse(request!.body)).toEqual({ ...input, channel: 'sms' });
    expect(request!.headers['idempotency-key']).toBe('key-1');
  });

  it('keeps a path prefix of the base URL and encodes the session id into one path segment', async () => {
    const service = await scriptedServer([json(200, { status: 'pending' })]);
    await client(`${service.url}/api/v2/`).getSession('a/../b?c');
    expect(service.requests[0]!.url).toBe('/api/v2/session/a%2F..%2Fb%3Fc');
  });

  it('retries 5xx, resets and 409 in-flight with the same Idempotency-Key, and uses a replay like the original', async () => {
    const service = await scriptedServer([
      json(503, { errorCode: 'service_unavailable' }),
      (req) => req.socket.destroy(),
      json(409, { isSuccess: false, errorCode: 'idempotency_request_in_flight' }),
      json(200, created, { 'idempotent-replayed': 'true' }),
    ]);
    const session = await client(service.url).createSession(input, 'key-42');
    expect(session).toMatchObject({ sessionId: 'sess-1', handoff: 'hx-1', replayed: true });
    expect(service.requests.map((r) => r.headers['idempotency-key'])).toEqual(['key-42', 'key-42', 'key-42', 'key-42']);
  });

  it('does not retry a validation error or idempotency_key_reused, and surfaces the errorCode', async () => {
    for (const [status, errorCode] of [
      [400, 'invalid_return_url'],
      [422, 'idempotency_key_reused'],
    ] as const) {
      const service = await scriptedServer([json(status, { isSuccess: false, errorCode })]);
      const error = await client(service.url)
        .createSession(input, 'key-1')
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'service_rejected', serviceErrorCode: errorCode, serviceStatus: status });
      expect(service.requests).toHaveLength(1);
    }
  });

  it('reads a 429 by its status and Retry-After only, whatever its body: the create retried with the same key', async () => {
    const tooMany: Handler = (_req, res) => {
      res.writeHead(429, { 'content-type': 'text/plain', 'retry-after': '1' });
      res.end('slow down');
    };
    const service = await scriptedServer([tooMany, json(200, created)]);
    const began = Date.now();
    const session = await client(service.url, { retry: { baseDelayMs: 1 } }).createSession(input, 'key-429');
    expect(session.sessionId).toBe('sess-1');
    expect(Date.now() - began).toBeGreaterThanOrEqual(950);
    expect(service.requests.map((r) => r.headers['idempotency-key'])).toEqual(['key-429', 'key-429']);
  });

  it('gives up on a 429 whose Retry-After (an HTTP date) is past the busy budget: service_busy, one try', async () => {
    const later = new Date(Date.now() + 120_000).toUTCString();
    const service = await scriptedServer([json(429, { anything: true }, { 'retry-after': later })]);
    const error = await client(service.url)
      .createSession(input, 'k')
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'service_busy', status: 503, serviceStatus: 429 });
    expect((error as { retryAfterSeconds: number }).retryAfterSeconds).toBeGreaterThan(100);
    expect(service.requests).toHaveLength(1);
  });

  it('never retries a status read on 429: service_busy at once, so the caller decides', async () => {
    const service = await scriptedServer([json(429, {}, { 'retry-after': '2' }), json(200, { status: 'pending' })]);
    const error = await client(service.url)
      .getSession('sess-1')
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'service_busy', retryAfterSeconds: 2 });
    expect(service.requests).toHaveLength(1);
  });

  it('gives up after its retries with service_unavailable', async () => {
    const service = await scriptedServer([json(502, {})]);
    const error = await client(service.url, { retry: { maxAttempts: 3, baseDelayMs: 1 } })
      .createSession(input, 'k')
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'service_unavailable', serviceStatus: 502 });
    expect(service.requests).toHaveLength(3);
  });

  it('follows no redirect: a 3xx is a protocol error and the target is never contacted', async () => {
    const elsewhere = await scriptedServer([json(200, { status: 'verified', state: 'state-1', userRef: 'user-1' })]);
    const service = await scriptedServer([
      (_req, res) => {
        res.writeHead(307, { location: `${elsewhere.url}/session/x` });
        res.end();
      },
    ]);
    const error = await client(service.url)
      .getSession('x')
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'service_protocol_error', serviceStatus: 307 });
    expect(elsewhere.requests).toHaveLength(0);
  });

  it('checks the content type and the body before trusting a status', async () => {
    const html = await scriptedServer([
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('{"status":"verified"}');
      },
    ]);
    await expect(client(html.url).getSession('x')).rejects.toMatchObject({ code: 'service_protocol_error' });
    const notObject = await scriptedServer([
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('["verified"]');
      },
    ]);
    await expect(client(notObject.url).getSession('x')).rejects.toMatchObject({ code: 'service_protocol_error' });
    const unknownStatus = await scriptedServer([json(200, { status: 'approved' })]);
    await expect(client(unknownStatus.url).getSession('x')).rejects.toMatchObject({ code: 'service_protocol_error' });
    const noHandoff = await scriptedServer([json(200, { ...created, handoff: undefined })]);
    await expect(client(noHandoff.url).createSession(input, 'k')).rejects.toMatchObject({
      code: 'service_protocol_error',
    });
  });

  it('tolerates unknown fields and reasons, and ignores assertionExchanged', async () => {
    const service = await scriptedServer([
      json(200, {
        status: 'failed',
        reason: 'carrier_blocked',
        state: 's',
        userRef: 'u',
        assertionExchanged: true,
        riskScore: 3,
      }),
      json(200, { status: 'verified', state: 's', userRef: 'u', assertionExchanged: false, extra: { nested: 1 } }),
    ]);
    const c = client(service.url);
    expect(await c.getSession('a')).toEqual({ status: 'failed', reason: 'carrier_blocked', state: 's', userRef: 'u' });
    expect(await c.getSession('b')).toEqual({ status: 'verified', state: 's', userRef: 'u' });
  });

  it('times out a service that never answers, within its headers timeout per try', async () => {
    const service = await scriptedServer([() => {}]);
    const started = Date.now();
    const error = await client(service.url, { timeouts: { headersMs: 150 }, statusReadAttempts: 2 })
      .getSession('x')
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'service_unavailable' });
    // undici checks timeouts on a coarse (~1 s) timer: bound the total, not each tick.
    expect(Date.now() - started).toBeLessThan(5000);
    expect(service.requests).toHaveLength(2);
  });

  it('never carries the secret or the Authorization value in any error it throws', async () => {
    const authorization = Buffer.from(`client-1:${SECRET}`).toString('base64');
    const service = await scriptedServer([
      json(401, { isSuccess: false, errorCode: 'unauthorized' }),
      (req) => req.socket.destroy(),
      (_req, res) => {
        res.writeHead(302, { location: '/elsewhere' });
        res.end();
      },
      () => {},
    ]);
    const c = client(service.url, { timeouts: { headersMs: 100 }, retry: { maxAttempts: 1 }, statusReadAttempts: 1 });
    const errors = [
      await c.createSession(input, 'k').catch((e: unknown) => e),
      await c.getSession('x').catch((e: unknown) => e),
      await c.getSession('x').catch((e: unknown) => e),
      await c.getSession('x').catch((e: unknown) => e),
    ];
    expect(errors.map((e) => (e as { code: string }).code)).toEqual([
      'service_rejected',
      'service_unavailable',
      'service_protocol_error',
      'service_unavailable',
    ]);
    for (const error of errors) {
      const text = everythingAbout(error);
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(authorization);
    }
    expect(inspect(c, { depth: 10, showHidden: true })).not.toContain(authorization);
  });

  it('rejects configuration it cannot use, naming the option to fix and never echoing the secret', () => {
    expect(() => createVerifyClient({ baseUrl: 'verify.example.com', clientId: 'c', clientSecret: SECRET })).toThrow(
      /`baseUrl` must be an absolute/,
    );
    expect(() =>
      createVerifyClient({ baseUrl: `https://c:${SECRET}@verify.example`, clientId: 'c', clientSecret: SECRET }),
    ).toThrow(/`baseUrl` must not carry the client secret/);
    expect(() =>
      createVerifyClient({ baseUrl: 'https://c:other@verify.example', clientId: 'c', clientSecret: SECRET }),
    ).toThrow(/`baseUrl` must not carry credentials/);
    expect(() =>
      createVerifyClient({ baseUrl: 'https://verify.example', clientId: 'a:b', clientSecret: SECRET }),
    ).toThrow(/`clientId`/);
    expect(() => createVerifyClient({ baseUrl: 'https://verify.example', clientId: 'c', clientSecret: '' })).toThrow(
      /`clientSecret`/,
    );
    let refusal: unknown;
    try {
      createVerifyClient({ baseUrl: `https://c:${SECRET}@verify.example`, clientId: 'c', clientSecret: SECRET });
    } catch (error) {
      refusal = error;
    }
    // Checked outside the catch: a client built without refusing would otherwise pass unseen.
    expect(isKitError(refusal, KitErrorCode.InvalidOptions)).toBe(true);
    expect(everythingAbout(refusal)).not.toContain(SECRET);
  });

  // Every call carries the secret in its Authorization header: in clear across a network, anyone
  // on the path could read it. The kit's own options already refused this; the client took it.
  it('refuses plain http to any host but a loopback emulator, as the kit does', () => {
    for (const baseUrl of ['http://verify.example.com', 'http://10.0.0.7:4000', 'http://emulator:4000/v1']) {
      expect(() => createVerifyClient({ baseUrl, clientId: 'c', clientSecret: SECRET }), baseUrl).toThrow(
        /`baseUrl` must use https \(http is allowed only for a loopback emulator\)/,
      );
    }
    for (const baseUrl of [
      'http://127.0.0.1:4000',
      'http://localhost:4000/v1',
      'http://emulator.localhost',
      'http://[::1]:9',
    ]) {
      expect(() => createVerifyClient({ baseUrl, clientId: 'c', clientSecret: SECRET }), baseUrl).not.toThrow();
    }
  });
});

describe('the client sends and reads exactly what the interface states', () => {
  it('never sends an Idempotency-Key over 255 characters: 256 is refused before any request, 255 goes out as given', async () => {
    const service = await scriptedServer([json(200, created)]);
    const c = client(service.url);
    await expect(c.createSession(input, 'k'.repeat(256))).rejects.toMatchObject({ code: 'invalid_options' });
    expect(service.requests).toHaveLength(0);
    await c.createSession(input, 'k'.repeat(255));
    expect(service.requests.map((r) => r.headers['idempotency-key'])).toEqual(['k'.repeat(255)]);
  });

  it('reports a 422 idempotency_key_reused as the key already used with a different payload, tried once', async () => {
    const service = await scriptedServer([json(422, { isSuccess: false, errorCode: 'idempotency_key_reused' })]);
    const error = await client(service.url)
      .createSession(input, 'key-1')
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 'service_rejected',
      serviceStatus: 422,
      serviceErrorCode: 'idempotency_key_reused',
    });
    expect((error as Error).message).toMatch(/already used with a different payload/);
    expect(service.requests).toHaveLength(1);
  });

  it.each([
    ['no state', { status: 'verified', userRef: 'u' }],
    ['no userRef', { status: 'verified', state: 's' }],
    ['a state that is not a string', { status: 'verified', state: 7, userRef: 'u' }],
    ['a userRef that is not a string', { status: 'verified', state: 's', userRef: null }],
  ])('refuses a verified answer with %s as a protocol error, never as verified', async (_name, body) => {
    const service = await scriptedServer([json(200, { isSuccess: true, ...body })]);
    await expect(client(service.url).getSession('x')).rejects.toMatchObject({ code: 'service_protocol_error' });
  });

  it.each([
    ['a status of another case', { status: 'Verified', state: 's', userRef: 'u' }],
    ['no status', { isSuccess: true, state: 's', userRef: 'u' }],
  ])('refuses %s as a protocol error', async (_name, body) => {
    const service = await scriptedServer([json(200, body)]);
    await expect(client(service.url).getSession('x')).rejects.toMatchObject({ code: 'service_protocol_error' });
  });

  it('reads a bare pending (an unknown id, or another client’s) without state or userRef', async () => {
    const service = await scriptedServer([json(200, { isSuccess: true, status: 'pending' })]);
    expect(await client(service.url).getSession('x')).toEqual({
      status: 'pending',
      state: undefined,
      userRef: undefined,
    });
  });

  it('reads a status answer under any 2xx code, as the success code of the read is not stated', async () => {
    const service = await scriptedServer([
      json(203, { isSuccess: true, status: 'verified', state: 's', userRef: 'u' }),
    ]);
    expect(await client(service.url).getSession('x')).toEqual({ status: 'verified', state: 's', userRef: 'u' });
  });

  it.each([0, -120, 1.5, '120'])(
    'refuses a create answer whose expiresInSeconds is %j (not a positive integer) as a protocol error',
    async (expiresInSeconds) => {
      const service = await scriptedServer([json(200, { ...created, expiresInSeconds })]);
      await expect(client(service.url).createSession(input, 'k')).rejects.toMatchObject({
        code: 'service_protocol_error',
      });
    },
  );
});

describe('the client bounds what a service sends back', () => {
  it('refuses an answer larger than a status or a create needs, however well-formed, as a protocol error', async () => {
    // A verified answer padded to 5 MB: a hostile service or proxy must not make the kit buffer it.
    const padded = ' '.repeat(5 * 1024 * 1024) + JSON.stringify({ status: 'verified', state: 's', userRef: 'u' });
    const service = await scriptedServer([
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(padded);
      },
    ]);
    await expect(client(service.url).getSession('x')).rejects.toMatchObject({ code: 'service_protocol_error' });
    expect(service.requests).toHaveLength(1);
  });

  it('reads an answer within the bound as before, a UTF-8 byte order mark dropped', async () => {
    const service = await scriptedServer([
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
        res.end(`\ufeff${JSON.stringify({ status: 'failed', reason: 'carrier_blocked', state: 'é', userRef: 'u' })}`);
      },
    ]);
    expect(await client(service.url).getSession('x')).toEqual({
      status: 'failed',
      reason: 'carrier_blocked',
      state: 'é',
      userRef: 'u',
    });
  });

  it('stops reading an endless body instead of buffering it', async () => {
    let stop = false;
    const service = await scriptedServer([
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = ' '.repeat(64 * 1024);
        const pump = () => {
          while (!stop && res.write(chunk));
          if (!stop) res.once('drain', pump);
        };
        res.on('close', () => (stop = true));
        pump();
      },
    ]);
    const started = Date.now();
    await expect(client(service.url).getSession('x')).rejects.toMatchObject({ code: 'service_protocol_error' });
    stop = true;
    expect(Date.now() - started).toBeLessThan(5000);
  }, 15_000);

  it('gives up on a body sent a byte at a time within its body timeout, not a timeout per byte', async () => {
    const timers: NodeJS.Timeout[] = [];
    const service = await scriptedServer([
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        // Whitespace JSON allows, each byte well inside the body timeout: the answer never completes.
        timers.push(setInterval(() => res.write(' '), 50));
        res.on('close', () => timers.forEach(clearInterval));
      },
    ]);
    const started = Date.now();
    const error = await client(service.url, { timeouts: { bodyMs: 300 }, statusReadAttempts: 2 })
      .getSession('x')
      .catch((e: unknown) => e);
    timers.forEach(clearInterval);
    expect(error).toMatchObject({ code: 'service_unavailable' });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(service.requests).toHaveLength(2);
  }, 15_000);
});

describe('a failure reason that spells the credentials is not kept', () => {
  const basic = Buffer.from(`client-1:${SECRET}`).toString('base64');
  // Each looks like a code (letters, digits, `_`, `-`, `.`): a service or proxy echoing what it was sent.
  const echoes = {
    'the secret as is': SECRET,
    'a run of the secret': SECRET.slice(3, 14),
    'the start of the Basic credentials': basic.replace(/[+/=].*$/, '').slice(0, 24),
  };
  it.each(Object.entries(echoes))('%s reads as the reason unknown', async (_name, reason) => {
    expect(reason.length).toBeGreaterThanOrEqual(8);
    const service = await scriptedServer([json(200, { status: 'failed', reason, state: 's', userRef: 'u' })]);
    const status = await client(service.url).getSession('x');
    expect(status).toEqual({ status: 'failed', reason: 'unknown', state: 's', userRef: 'u' });
  });
});

describe('a create answer whose sessionId the landing would refuse', () => {
  // The landing takes back printable ASCII without spaces, 1 to 256 characters: with any other id,
  // the user's return could never complete the attempt, and the text would be spent for nothing.
  it.each([
    ['with a space', 'ses 1'],
    ['257 characters long', 's'.repeat(257)],
    ['with a character outside ASCII', 'ses-\u00e9'],
    ['with a newline', 'ses-1\n'],
  ])('%s: a protocol error', async (_name, sessionId) => {
    const service = await scriptedServer([json(200, { ...created, sessionId })]);
    await expect(client(service.url).createSession(input, 'k')).rejects.toMatchObject({
      code: 'service_protocol_error',
    });
  });

  it('of 256 printable characters: taken', async () => {
    const sessionId = `s${'~'.repeat(254)}!`;
    const service = await scriptedServer([json(200, { ...created, sessionId })]);
    expect((await client(service.url).createSession(input, 'k')).sessionId).toBe(sessionId);
  });
});

describe('a create answer that spells the credentials is refused', () => {
  const basic = Buffer.from(`client-1:${SECRET}`).toString('base64');
  // What the kit would log and trace (sessionId) or put in the handoff page (verifyUrl, handoff).
  const echoes = {
    'sessionId as the secret': { sessionId: SECRET },
    'sessionId as a run of the Basic credentials': { sessionId: `sess-${basic.slice(4, 20)}` },
    'handoff carrying the Basic credentials': { handoff: `hx.${basic}` },
    'verifyUrl carrying the secret URL-encoded': {
      verifyUrl: `https://verify.example/v?c=${encodeURIComponent(SECRET)}`,
    },
  };
  it.each(Object.entries(echoes))('%s: a protocol error that quotes none of it', async (_name, fields) => {
    const service = await scriptedServer([json(200, { ...created, ...fields })]);
    const error = await client(service.url)
      .createSession(input, 'k')
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'service_protocol_error' });
    const text = everythingAbout(error);
    expect(text).not.toContain(SECRET.slice(3, 14));
    expect(text).not.toContain(basic.slice(4, 20));
  });
});

describe('what a service sends in its headers is quoted without the credentials', () => {
  const basic = Buffer.from(`client-1:${SECRET}`).toString('base64');
  it('a content type echoing part of the Authorization header is not quoted with it', async () => {
    const service = await scriptedServer([
      (req, res) => {
        const echoed = (req.headers.authorization ?? '').slice(6, 30);
        res.writeHead(200, { 'content-type': `text/plain; echo=${echoed}` });
        res.end('{}');
      },
    ]);
    const error = await client(service.url)
      .getSession('x')
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'service_protocol_error' });
    expect((error as Error).message).toContain('text/plain');
    expect(everythingAbout(error)).not.toContain(basic.slice(0, 24).slice(4));
  });

  it('a content type is quoted at most 100 characters long', async () => {
    const service = await scriptedServer([
      (_req, res) => {
        res.writeHead(200, { 'content-type': `text/plain; x=${'a'.repeat(4000)}` });
        res.end('{}');
      },
    ]);
    const error = await client(service.url)
      .getSession('x')
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'service_protocol_error' });
    expect((error as Error).message.length).toBeLessThan(300);
  });

  it('an error code is quoted at most 100 characters long', async () => {
    const service = await scriptedServer([json(400, { isSuccess: false, errorCode: `bad_${'x'.repeat(5000)}` })]);
    const error = await client(service.url)
      .createSession(input, 'k')
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'service_rejected', serviceErrorCode: expect.stringMatching(/^bad_x+…$/) });
    expect((error as { serviceErrorCode: string }).serviceErrorCode.length).toBeLessThanOrEqual(101);
    expect((error as Error).message.length).toBeLessThan(300);
  });
});

describe('timeouts the client cannot keep are refused when it is created', () => {
  // A timer past 2^31 - 1 ms, or of 0, fires at once: every call would fail; NaN would never bound a call.
  it.each([
    ['bodyMs', 0],
    ['bodyMs', Number.POSITIVE_INFINITY],
    ['headersMs', 2 ** 31],
    ['connectMs', -5],
    ['bodyMs', Number.NaN],
    ['headersMs', '1000'],
  ])('timeouts.%s = %s: invalid_options naming it', (name, value) => {
    let refusal: unknown;
    try {
      client('http://127.0.0.1:1', { timeouts: { [name]: value } as never });
    } catch (error) {
      refusal = error;
    }
    expect(isKitError(refusal, KitErrorCode.InvalidOptions)).toBe(true);
    expect((refusal as Error).message).toContain(`timeouts.${name}`);
  });

  it('takes whole milliseconds from 1 to 2147483647, and undefined as the default', () => {
    expect(() => client('http://127.0.0.1:1', { timeouts: { bodyMs: undefined } })).not.toThrow();
    expect(() =>
      client('http://127.0.0.1:1', { timeouts: { connectMs: 1, headersMs: 2 ** 31 - 1, bodyMs: 50 } }),
    ).not.toThrow();
  });
});

describe('settings the client does not know are refused when it is created, with the ones it does', () => {
  /** The refusal createVerifyClient throws for these options (undefined when it takes them). */
  function refusalOf(extra: Partial<VerifyClientOptions>): unknown {
    try {
      void client('http://127.0.0.1:1', extra).close();
    } catch (error) {
      return error;
    }
    return undefined;
  }

  // A typo did nothing: the call waited the default 10 s, or retried 5 times, as if it were not there.
  it.each([
    ['timeouts', { statsRead: 2000 }, '`timeouts.statsRead` is not an option; use connectMs, headersMs, bodyMs.'],
    ['retry', { maxAttempt: 1 }, '`retry.maxAttempt` is not an option: did you mean `maxAttempts`?'],
  ])(
    'an unknown key in %s: invalid_options naming it and the one it likely meant, or the known ones',
    (group, settings, problem) => {
      const refusal = refusalOf({ [group]: settings });
      expect(isKitError(refusal, KitErrorCode.InvalidOptions)).toBe(true);
      expect((refusal as Error).message).toBe(`createVerifyClient: ${problem}`);
    },
  );

  // 0 never read a status at all; NaN or 2.5 never stopped retrying as intended.
  it.each([0, 1001, 2.5, Number.NaN, '2'])('statusReadAttempts = %s: invalid_options with its range', (value) => {
    const refusal = refusalOf({ statusReadAttempts: value as never });
    expect(isKitError(refusal, KitErrorCode.InvalidOptions)).toBe(true);
    expect((refusal as Error).message).toBe(
      'createVerifyClient: `statusReadAttempts` must be a whole number of tries from 1 to 1000.',
    );
  });

  it('lists every problem at once, and takes statusReadAttempts from 1 to 1000 and undefined as the default', () => {
    const refusal = refusalOf({ timeouts: { statsRead: 1 } as never, statusReadAttempts: 0 });
    expect((refusal as Error).message).toContain('`timeouts.statsRead` is not an option');
    expect((refusal as Error).message).toContain('`statusReadAttempts` must be a whole number of tries');
    for (const statusReadAttempts of [1, 1000, undefined]) expect(refusalOf({ statusReadAttempts })).toBeUndefined();
  });

  // A misspelt top-level option did nothing: statusReadAttemps kept the default 2 tries, timeout no timeout.
  it.each([
    ['statusReadAttemps', 3, 'statusReadAttempts'],
    ['timeout', SECRET, 'timeouts'],
  ])(
    'an unknown top-level key %s: invalid_options naming it and the one it likely meant, never its value',
    (key, value, meant) => {
      const refusal = refusalOf({ [key]: value } as never);
      expect(isKitError(refusal, KitErrorCode.InvalidOptions)).toBe(true);
      expect((refusal as Error).message).toBe(
        `createVerifyClient: \`${key}\` is not an option: did you mean \`${meant}\`?`,
      );
    },
  );

  it('an unknown top-level key like none of them: invalid_options naming it and the known ones', () => {
    const refusal = refusalOf({ webhookUrl: 'https://hooks.example/' } as never);
    expect((refusal as Error).message).toBe(
      'createVerifyClient: `webhookUrl` is not an option; use baseUrl, clientId, clientSecret, timeouts, retry, statusReadAttempts, connections.',
    );
  });

  // A wrong baseUrl was thrown alone: the caller fixed it, then met the next problem on the next run.
  it('lists a baseUrl problem with the other problems of the call', () => {
    let refusal: unknown;
    try {
      createVerifyClient({ baseUrl: 'verify.example.com', clientId: 'c', clientSecret: SECRET, statusReadAttempts: 0 });
    } catch (error) {
      refusal = error;
    }
    expect(isKitError(refusal, KitErrorCode.InvalidOptions)).toBe(true);
    expect((refusal as Error).message).toContain('`baseUrl` must be an absolute');
    expect((refusal as Error).message).toContain('`statusReadAttempts` must be a whole number of tries');
    expect((refusal as Error).message).not.toContain(SECRET);
  });

  // The credentials were checked alone when the transport was built, by rules of their own: a
  // secret read from a file with its trailing newline was taken and sent, and the service
  // answered 401 on every call, with nothing saying why.
  it("lists credential problems with the other problems of the call, by the kit's rules", () => {
    let refusal: unknown;
    try {
      createVerifyClient({
        baseUrl: 'https://verify.example',
        clientId: 'c',
        clientSecret: `${SECRET}\n`,
        retry: { maxAttempts: 0 },
      });
    } catch (error) {
      refusal = error;
    }
    expect(isKitError(refusal, KitErrorCode.InvalidOptions)).toBe(true);
    expect((refusal as Error).message).toContain('`clientSecret` contains whitespace or control characters');
    expect((refusal as Error).message).toContain('`retry.maxAttempts` must be a whole number of tries');
    expect((refusal as Error).message).not.toContain(SECRET);
  });
});

describe('retries the client cannot keep are refused when it is created', () => {
  // A NaN or negative delay retried at once, a 429's Retry-After ignored; a NaN limit never stopped.
  it.each([
    ['maxAttempts', 0],
    ['maxAttempts', Number.NaN],
    ['maxAttempts', 2.5],
    ['baseDelayMs', -100],
    ['baseDelayMs', Number.NaN],
    ['maxDelayMs', '3000'],
    ['budgetMs', Number.POSITIVE_INFINITY],
    ['busyBudgetMs', -1],
  ])('retry.%s = %s: invalid_options naming it', (name, value) => {
    let refusal: unknown;
    try {
      client('http://127.0.0.1:1', { retry: { [name]: value } as never });
    } catch (error) {
      refusal = error;
    }
    expect(isKitError(refusal, KitErrorCode.InvalidOptions)).toBe(true);
    expect((refusal as Error).message).toContain(`retry.${name}`);
  });

  it('a 429 is waited out for its Retry-After even when a delay is given as undefined', async () => {
    const service = await scriptedServer([json(429, {}, { 'retry-after': '1' }), json(200, created)]);
    const c = client(service.url, { retry: { baseDelayMs: undefined, maxDelayMs: undefined } });
    const startedAt = Date.now();
    await c.createSession(input, 'key-1');
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(900);
    await c.close();
  });

  it('takes whole numbers in range, 0 for the busy budget, and undefined as the default', () => {
    expect(() => client('http://127.0.0.1:1', { retry: { maxAttempts: undefined, busyBudgetMs: 0 } })).not.toThrow();
    expect(() =>
      client('http://127.0.0.1:1', {
        retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 10, budgetMs: 2 ** 31 - 1 },
      }),
    ).not.toThrow();
  });
});
