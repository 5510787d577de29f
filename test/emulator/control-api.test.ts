import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLoopbackAddress } from '../../emulator/control/control.ts';
import {
  WEB_CLIENT,
  createSession,
  newSession,
  openHostedPage,
  readSession,
  sessionBody,
  startTestEmulator,
  type TestEmulator,
  useTestEmulator,
} from '../support/emulator.ts';

const emulator = useTestEmulator({}, { resetEach: true });

describe('control off (production-like)', () => {
  let production: TestEmulator;
  beforeAll(async () => {
    production = await startTestEmulator({ control: false });
  });
  afterAll(() => production.close());

  it.each(['/_control/outbox', '/_control/stats', '/_dev/inbox'])('GET %s is 404', async (path) => {
    expect((await fetch(`${production.url}${path}`)).status).toBe(404);
  });

  it.each(['/_control/reset', '/_control/clock', '/_control/faults'])('POST %s is 404', async (path) => {
    const response = await fetch(`${production.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"advanceSeconds":1}',
    });
    expect(response.status).toBe(404);
  });

  it('still serves the API and prints each SMS on its log, the number masked', async () => {
    expect((await createSession(production.url, WEB_CLIENT)).status).toBe(200);
    expect(production.logLines.at(-1)).toMatch(/^SMS to ••\u00a067: your code is \d{6} \(session ses_/);
    expect(production.logLines.join('\n')).not.toContain('5551234567');
  });
});

describe('control API is for loopback callers only', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.4.5.6', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    ['10.0.0.8', false],
    ['192.168.1.2', false],
    ['::ffff:10.0.0.8', false],
    ['2001:db8::1', false],
    [undefined, false],
  ])('%s is loopback: %s', (address, expected) => {
    expect(isLoopbackAddress(address)).toBe(expected);
  });
});

/** One request with a Host header of our choosing (fetch would send the URL's own). */
function withHost(method: string, path: string, host: string): Promise<number> {
  const url = new URL(emulator.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, method, path, headers: { host, 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end(method === 'POST' ? JSON.stringify({ advanceSeconds: 0 }) : undefined);
  });
}

describe('control API and dev inbox refuse a rebinding Host (DNS rebinding from a page in a browser)', () => {
  const routes = [
    ['GET', '/_control/outbox'],
    ['GET', '/_dev/inbox'],
    ['POST', '/_control/clock'],
  ] as const;
  const port = () => new URL(emulator.url).port;

  it.each(routes)('%s %s answers 421 to a non-loopback Host, from a loopback peer', async (method, path) => {
    for (const host of [
      'rebind.attacker.example',
      `rebind.attacker.example:${port()}`,
      `127.0.0.1.attacker.example:${port()}`,
      `localhost.attacker.example`,
      `[2001:db8::1]:${port()}`,
    ]) {
      expect({ host, status: await withHost(method, path, host) }).toEqual({ host, status: 421 });
    }
  });

  it.each(routes)('%s %s answers loopback Hosts, with or without a port', async (method, path) => {
    for (const host of [
      'localhost',
      `localhost:${port()}`,
      `verify.localhost:${port()}`,
      `127.0.0.1:${port()}`,
      '[::1]',
    ]) {
      expect({ host, status: await withHost(method, path, host) }).toEqual({ host, status: 200 });
    }
  });
});

describe("control API refuses cross-site requests (a page in the developer's browser posting a simple form)", () => {
  const post = (path: string, headers: Record<string, string>, body = '{}') =>
    fetch(`${emulator.url}/_control${path}`, { method: 'POST', headers, body });

  it('a text/plain POST from a foreign Origin cannot reset the emulator: a verified session stays verified', async () => {
    const { sessionId } = await newSession(emulator.url, WEB_CLIENT);
    await emulator.control.completeSession(sessionId, 'verified');
    const reset = await post('/reset', { origin: 'https://evil.example', 'content-type': 'text/plain' }, 'x');
    expect(reset.status).toBe(403);
    expect((await readSession(emulator.url, WEB_CLIENT, sessionId)).body).toMatchObject({ status: 'verified' });
  });

  it.each<[string, Record<string, string>]>([
    ['a foreign Origin, even with JSON', { origin: 'https://evil.example', 'content-type': 'application/json' }],
    [
      'Sec-Fetch-Site: cross-site, even with JSON',
      { 'sec-fetch-site': 'cross-site', 'content-type': 'application/json' },
    ],
    ['a simple content type from no Origin', { 'content-type': 'text/plain' }],
    ['a form from no Origin', { 'content-type': 'application/x-www-form-urlencoded' }],
    ['no content type at all', {}],
  ])('POST /_control/clock with %s is refused', async (_what, headers) => {
    const response = await post('/clock', headers, JSON.stringify({ advanceSeconds: 60 }));
    expect(response.status).toBe(headers['content-type'] === 'application/json' ? 403 : 415);
  });

  it('a loopback Origin, same-origin Sec-Fetch-Site, or none, with application/json, is served', async () => {
    const callers: Record<string, string>[] = [
      { origin: emulator.url },
      { origin: 'http://localhost:3000' },
      { 'sec-fetch-site': 'same-origin' },
      { 'sec-fetch-site': 'none' },
      {},
    ];
    for (const headers of callers) {
      const response = await post('/clock', { ...headers, 'content-type': 'application/json' }, '{"advanceSeconds":0}');
      expect({ headers, status: response.status }).toEqual({ headers, status: 200 });
    }
  });
});

describe('outbox, inbox and clock', () => {
  it('lists messages oldest first on /_control/outbox and newest first on /_dev/inbox', async () => {
    const first = await newSession(emulator.url, WEB_CLIENT, { destination: '+15550000001' });
    const second = await newSession(emulator.url, WEB_CLIENT, { destination: '+15550000002' });
    const messages = await emulator.control.outbox();
    expect(messages.map((message) => message.sessionId)).toEqual([first.sessionId, second.sessionId]);
    const inbox = await (await fetch(`${emulator.url}/_dev/inbox`)).text();
    expect(inbox.indexOf('+15550000002')).toBeGreaterThan(0);
    expect(inbox.indexOf('+15550000002')).toBeLessThan(inbox.indexOf('+15550000001'));
    expect(inbox).toContain(messages[1]?.code);
  });

  it('advancing the clock moves SMS timestamps', async () => {
    await newSession(emulator.url, WEB_CLIENT);
    await emulator.control.advanceClock(3600);
    await newSession(emulator.url, WEB_CLIENT);
    const [a, b] = await emulator.control.outbox();
    expect(Date.parse(b?.sentAt ?? '') - Date.parse(a?.sentAt ?? '')).toBeGreaterThanOrEqual(3600_000);
  });

  it('refuses a negative or missing advanceSeconds', async () => {
    for (const body of [{ advanceSeconds: -1 }, {}]) {
      const response = await fetch(`${emulator.url}/_control/clock`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(400);
    }
  });

  it('refuses an advance past the last date a clock can show (year 9999) with a 400 naming the bound, and the clock stays where it was', async () => {
    const before = await createSession(emulator.url, WEB_CLIENT);
    expect(before.status).toBe(200);
    for (const advanceSeconds of [1e300, 3e11]) {
      const response = await fetch(`${emulator.url}/_control/clock`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ advanceSeconds }),
      });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({
        errorCode: 'invalid_request',
        message: expect.stringMatching(/past 9999-12-31/),
      });
    }
    // Nothing moved: a session created now reads as before, and the handoff of the first is still in time.
    const after = await createSession(emulator.url, WEB_CLIENT);
    expect(after.status).toBe(200);
    const page = await openHostedPage(before.body.verifyUrl as string, before.body.handoff as string);
    expect(page.response.status).toBe(200);
    await emulator.control.advanceClock(3600);
  });
});

describe('faults', () => {
  it('createFailures: the next N creates answer createStatus (default 503 service_unavailable) without acting', async () => {
    await emulator.control.setFaults({ createFailures: 2 });
    for (let call = 0; call < 2; call += 1) {
      const answer = await createSession(emulator.url, WEB_CLIENT);
      expect(answer.status).toBe(503);
      expect(answer.body).toMatchObject({ isSuccess: false, errorCode: 'service_unavailable' });
    }
    expect((await emulator.control.stats()).smsSent).toBe(0);
    expect((await createSession(emulator.url, WEB_CLIENT)).status).toBe(200);
  });

  it('createStatus chooses the failure status', async () => {
    await emulator.control.setFaults({ createFailures: 1, createStatus: 500 });
    expect((await createSession(emulator.url, WEB_CLIENT)).status).toBe(500);
  });

  it('resetConnections before: the connection drops and nothing was created', async () => {
    await emulator.control.setFaults({ resetConnections: 1, resetPhase: 'before' });
    await expect(createSession(emulator.url, WEB_CLIENT, undefined, { idempotencyKey: 'k-before' })).rejects.toThrow();
    expect((await emulator.control.stats()).smsSent).toBe(0);
    const retry = await createSession(emulator.url, WEB_CLIENT, undefined, { idempotencyKey: 'k-before' });
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
  });

  it('resetConnections after (default): the session exists, the response is lost, the retry replays it', async () => {
    await emulator.control.setFaults({ resetConnections: 1 });
    const body = sessionBody(WEB_CLIENT);
    await expect(createSession(emulator.url, WEB_CLIENT, body, { idempotencyKey: 'k-after' })).rejects.toThrow();
    const [sent] = await emulator.control.outbox();
    expect(sent).toBeDefined();
    const retry = await createSession(emulator.url, WEB_CLIENT, body, { idempotencyKey: 'k-after' });
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body.sessionId).toBe(sent?.sessionId);
    expect((await emulator.control.stats()).smsByIdempotencyKey['k-after']).toBe(1);
  });

  it('createDelayMs holds each create before it acts', async () => {
    await emulator.control.setFaults({ createDelayMs: 300 });
    const started = Date.now();
    expect((await createSession(emulator.url, WEB_CLIENT)).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });

  it('statusFailures: the next N reads answer statusStatus, then reads work again', async () => {
    const { sessionId } = await newSession(emulator.url, WEB_CLIENT);
    await emulator.control.setFaults({ statusFailures: 1, statusStatus: 502 });
    const failed = await readSession(emulator.url, WEB_CLIENT, sessionId);
    expect(failed.status).toBe(502);
    expect(failed.body).toMatchObject({ isSuccess: false, errorCode: 'service_unavailable' });
    expect((await readSession(emulator.url, WEB_CLIENT, sessionId)).status).toBe(200);
  });

  it('statusDelayMs delays every read until changed', async () => {
    const { sessionId } = await newSession(emulator.url, WEB_CLIENT);
    await emulator.control.setFaults({ statusDelayMs: 250 });
    for (let call = 0; call < 2; call += 1) {
      const started = Date.now();
      await readSession(emulator.url, WEB_CLIENT, sessionId);
      expect(Date.now() - started).toBeGreaterThanOrEqual(240);
    }
  });

  it('refuses a delay longer than a timer can wait (2^31 - 1 ms) with a 400 naming the bound, and keeps the delays as they were', async () => {
    // Node would wait 1 ms instead: a test of a service that hangs would get a prompt answer.
    for (const faults of [{ createDelayMs: 2 ** 31 }, { statusDelayMs: 1e300 }]) {
      const answer = await emulator.control.setFaults(faults);
      expect(answer.status).toBe(400);
      expect(await answer.json()).toMatchObject({ message: expect.stringContaining('2147483647') });
    }
    const faults = (await (await fetch(`${emulator.url}/_control/faults`)).json()) as { faults: object };
    expect(faults.faults).toMatchObject({ createDelayMs: 0, statusDelayMs: 0 });
    // The longest a timer waits is taken.
    expect((await emulator.control.setFaults({ statusDelayMs: 2 ** 31 - 1 })).status).toBe(200);
    await emulator.control.setFaults({ statusDelayMs: 0 });
  });

  it('refuses unknown faults and bad values with 400', async () => {
    for (const faults of [{ createFailures: -1 }, { createStatus: 200 }, { resetPhase: 'during' }, { explode: true }]) {
      expect((await emulator.control.setFaults(faults)).status).toBe(400);
    }
  });
});

describe('stats', () => {
  it('counts creates, replays, SMS per key, status reads and verify posts', async () => {
    const body = sessionBody(WEB_CLIENT);
    const first = await createSession(emulator.url, WEB_CLIENT, body, { idempotencyKey: 'stats-key' });
    await createSession(emulator.url, WEB_CLIENT, body, { idempotencyKey: 'stats-key' });
    await createSession(emulator.url, WEB_CLIENT);
    await readSession(emulator.url, WEB_CLIENT, first.body.sessionId as string);
    await openHostedPage(first.body.verifyUrl as string, first.body.handoff as string);
    expect(await emulator.control.stats()).toEqual({
      creates: 2,
      replays: 1,
      smsSent: 2,
      smsByIdempotencyKey: { 'stats-key': 1 },
      smsByClientIdempotencyKey: { [WEB_CLIENT.clientId]: { 'stats-key': 1 } },
      statusReads: 1,
      statusReadsLimited: 0,
      createsLimited: 0,
      verifyPosts: 1,
      // +1 555 01xx is reserved for fiction: no country's ranges hold it, so it costs the default.
      smsCost: 0.2,
      smsByCountry: { ZZ: { sent: 2, cost: 0.2 } },
    });
  });

  it("prices each text by its number's country, from the table given (merged over the defaults)", async () => {
    const priced = await startTestEmulator({ smsPrices: { default: 0.5, countries: { NG: 0.25, FR: 0.1 } } });
    const france = ['+33612345678', '+33612345679', '+33612345670'];
    try {
      for (const destination of ['+2348031000001', '+2348032000001', ...france, '+18765550123', '+15551234567']) {
        expect((await createSession(priced.url, WEB_CLIENT, sessionBody(WEB_CLIENT, { destination }))).status).toBe(
          200,
        );
      }
      const stats = await priced.control.stats();
      expect(stats.smsByCountry).toEqual({
        NG: { sent: 2, cost: 0.5 },
        // Three texts at 0.1 cost 0.3, not 0.30000000000000004: sums are kept to a millionth.
        FR: { sent: 3, cost: 0.3 },
        JM: { sent: 1, cost: 0.5 },
        ZZ: { sent: 1, cost: 0.5 },
      });
      expect(stats.smsCost).toBe(1.8);
    } finally {
      await priced.close();
    }
    const refused: { default?: number; countries?: Record<string, number> }[] = [
      { countries: { Nigeria: 1 } },
      // No number belongs to UK (the United Kingdom is GB): its price would never be read.
      { countries: { UK: 0.04 } },
      { countries: { NG: -1 } },
      { default: Number.NaN },
    ];
    for (const smsPrices of refused) {
      await expect(startTestEmulator({ smsPrices }), JSON.stringify(smsPrices)).rejects.toThrow(
        /prices are numbers >= 0, countries ISO codes such as 'NG'/,
      );
    }
  });
});

describe('reset', () => {
  it('clears sessions, outbox, stats, faults and clock', async () => {
    const { sessionId } = await newSession(emulator.url, WEB_CLIENT);
    await emulator.control.setFaults({ createFailures: 5, statusDelayMs: 10 });
    await emulator.control.advanceClock(1000);
    await emulator.control.reset();
    expect(await emulator.control.outbox()).toEqual([]);
    expect((await emulator.control.stats()).creates).toBe(0);
    expect((await readSession(emulator.url, WEB_CLIENT, sessionId)).body).toEqual({
      isSuccess: true,
      status: 'pending',
    });
    expect((await createSession(emulator.url, WEB_CLIENT)).status).toBe(200);
    const [message] = await emulator.control.outbox();
    expect(Math.abs(Date.parse(message?.sentAt ?? '') - Date.now())).toBeLessThan(60_000);
  });
});

describe('sessions/:id/complete', () => {
  it('ends a pending session as verified or failed with any reason', async () => {
    const a = await newSession(emulator.url, WEB_CLIENT);
    const b = await newSession(emulator.url, WEB_CLIENT);
    expect((await emulator.control.complete(a.sessionId, { outcome: 'verified' })).status).toBe(200);
    expect(
      (await emulator.control.complete(b.sessionId, { outcome: 'failed', reason: 'some_future_reason' })).status,
    ).toBe(200);
    expect((await readSession(emulator.url, WEB_CLIENT, a.sessionId)).body.status).toBe('verified');
    expect((await readSession(emulator.url, WEB_CLIENT, b.sessionId)).body).toMatchObject({
      status: 'failed',
      reason: 'some_future_reason',
    });
  });

  it('refuses an unknown id (404), an ended session (409), a bad outcome or a failure without reason (400)', async () => {
    const { sessionId } = await newSession(emulator.url, WEB_CLIENT);
    expect((await emulator.control.complete('ses_nope', { outcome: 'verified' })).status).toBe(404);
    expect((await emulator.control.complete(sessionId, { outcome: 'done' })).status).toBe(400);
    expect((await emulator.control.complete(sessionId, { outcome: 'failed' })).status).toBe(400);
    await emulator.control.complete(sessionId, { outcome: 'verified' });
    expect((await emulator.control.complete(sessionId, { outcome: 'failed', reason: 'otp_locked' })).status).toBe(409);
    expect((await readSession(emulator.url, WEB_CLIENT, sessionId)).body.status).toBe('verified');
  });
});

describe('sessions/lookup and sessions/:id/echo (the integration audit)', () => {
  it('a handoff in the body names its session, state and return link; an unknown one is a 404', async () => {
    const created = await newSession(emulator.url, WEB_CLIENT, { state: 'S'.repeat(43), userRef: 'user-77' });
    const seen = await emulator.control.sessionByHandoff(created.handoff);
    expect(seen).toEqual({
      sessionId: created.sessionId,
      status: 'pending',
      state: 'S'.repeat(43),
      userRef: 'user-77',
      returnUrl: WEB_CLIENT.returnUrl,
      returnLocation: `${WEB_CLIENT.returnUrl}?session_id=${encodeURIComponent(created.sessionId)}&state=${'S'.repeat(43)}`,
    });
    await expect(emulator.control.sessionByHandoff('nope')).rejects.toMatchObject({
      status: 404,
      code: 'unknown_session',
    });
  });

  it("a tampered echo changes only that session's status reads, and refuses anything but a state or userRef", async () => {
    const tampered = await newSession(emulator.url, WEB_CLIENT, { state: 'A'.repeat(43), userRef: 'user-a' });
    const faithful = await newSession(emulator.url, WEB_CLIENT, { state: 'B'.repeat(43), userRef: 'user-b' });
    await emulator.control.tamperEcho(tampered.sessionId, { state: 'X'.repeat(43) });
    expect((await readSession(emulator.url, WEB_CLIENT, tampered.sessionId)).body).toMatchObject({
      state: 'X'.repeat(43),
      userRef: 'user-a',
    });
    expect((await readSession(emulator.url, WEB_CLIENT, faithful.sessionId)).body).toMatchObject({
      state: 'B'.repeat(43),
      userRef: 'user-b',
    });
    await expect(emulator.control.tamperEcho(tampered.sessionId, {})).rejects.toMatchObject({ status: 400 });
    await expect(
      emulator.control.tamperEcho(tampered.sessionId, { status: 'verified' } as { state?: string }),
    ).rejects.toMatchObject({ status: 400 });
    await expect(emulator.control.tamperEcho('ses_nope', { userRef: 'x' })).rejects.toMatchObject({ status: 404 });
  });
});
