/**
 * A return or start that names a parameter twice is refused (400, nothing written), wherever the
 * second one hides: past the 1000th pair of the landing's query (node:querystring's default
 * `maxKeys` dropped every pair after it), or as a key given twice in the mobile routes' JSON body
 * (`JSON.parse` keeps the last, a proxy in front may read the first). The scanner that finds a key
 * given twice is pinned on nested objects, arrays, escapes and strings holding braces. A JSON body
 * declared in a charset other than UTF-8 (which the parser would decode, hiding a key given twice
 * from that scanner) is refused.
 */
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { declaresUtf8, namesAKeyTwice } from '../../middleware/routes/json-body.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

const MOBILE_RETURN_URL = 'com.example.review://verify/return';

/** POSTs a JSON text as written (it may name a key twice) to one of the app's routes, as alice on her phone. */
function postJson(app: TestApp, path: string, body: string) {
  return app.agent().request(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-test-user': 'alice' },
    body,
  });
}

/** POSTs bytes to one of the app's routes, as alice on her phone, under the Content-Type given. */
function postBytes(app: TestApp, path: string, body: Buffer, contentType: string) {
  return fetch(new URL(path, app.url), {
    method: 'POST',
    headers: { 'content-type': contentType, 'x-test-user': 'alice' },
    body: new Uint8Array(body),
  });
}

/** A mobile start of grant_badge, verified on the hosted page but not completed: its stored attempt. */
async function verifiedMobileAttempt(app: TestApp) {
  const started = await postJson(app, '/verify/start', JSON.stringify({ action: 'grant_badge' }));
  expect(started.status).toBe(200);
  const handoff = (await started.json()) as { verifyUrl: string; handoff: string };
  const attempt = await app.latestAttempt();
  await app.agent().verifyOnHostedPage({ ...handoff, sessionId: attempt.sessionId });
  return attempt;
}

/** A completion naming "state" twice: a forged one first, the attempt's own last (the one JSON.parse keeps). */
function stateGivenTwice(attempt: { sessionId: string; state: string }): string {
  return `{"session_id":"${attempt.sessionId}","state":"${'Q'.repeat(43)}","state":"${attempt.state}"}`;
}

/** A start naming "action" twice. */
const ACTION_GIVEN_TWICE = '{"action":"no_such_action","action":"grant_badge"}';

describe('the landing: a duplicated parameter hidden after 1000 pairs', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('a second state and session_id after 1000 junk pairs is still a duplicate: 400, nothing fulfilled, no status read', async () => {
    const alice = await app.agent().signIn('alice');
    const started = await alice.start('grant');
    await alice.verifyOnHostedPage(started);
    const readsBefore = (await app.emulator.control.stats()).statusReads;
    const junk = Array.from({ length: 1000 }, (_, i) => `j${i}=1`).join('&');
    const query =
      `session_id=${encodeURIComponent(started.sessionId)}&state=${started.state}` +
      `&${junk}&state=${'B'.repeat(43)}&session_id=another-session`;
    const answer = await alice.land(query);
    expect(answer.status).toBe(400);
    expect(app.grants(started.sessionId)).toBe(0);
    expect((await app.attempt(started.sessionId))?.outcome).toBe('pending');
    expect((await app.emulator.control.stats()).statusReads).toBe(readsBefore);
  });
});

describe('the mobile routes: a key given twice in the JSON body', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ mobileReturnUrl: MOBILE_RETURN_URL });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('the completion with "state" given twice: 400 invalid_return_params, nothing fulfilled', async () => {
    const attempt = await verifiedMobileAttempt(app);
    const answer = await postJson(app, '/verify/mobile/complete', stateGivenTwice(attempt));
    expect(answer.status).toBe(400);
    expect(app.grants(attempt.sessionId)).toBe(0);
    expect((await app.attempt(attempt.sessionId))?.outcome).toBe('pending');
  });

  it('the start with "action" given twice: 400, no session created, no SMS sent', async () => {
    const createsBefore = (await app.emulator.control.stats()).creates;
    const attemptsBefore = await app.attemptCount();
    const answer = await postJson(app, '/verify/start', ACTION_GIVEN_TWICE);
    expect(answer.status).toBe(400);
    expect((await app.emulator.control.stats()).creates).toBe(createsBefore);
    expect(await app.attemptCount()).toBe(attemptsBefore);
  });
});

describe('the mobile routes: a key given twice in a JSON body that is not UTF-8', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ mobileReturnUrl: MOBILE_RETURN_URL });
  });
  afterAll(async () => {
    await app?.close();
  });

  // Express's JSON parser decodes any charset named `utf-…`; the text judged for a key given twice
  // must be the text JSON.parse reads, so a body in another encoding is refused whole.
  it.each(['utf-16le', 'UTF-16BE', 'utf-16', 'utf-7'])(
    'the completion with "state" given twice in %s: 400 invalid_return_params, nothing fulfilled',
    async (charset) => {
      const attempt = await verifiedMobileAttempt(app);
      const text = stateGivenTwice(attempt);
      const bytes = charset === 'utf-7' ? Buffer.from(text.replaceAll('"', '+ACI-')) : encoded(text, charset);
      const answer = await postBytes(app, '/verify/mobile/complete', bytes, `application/json; charset=${charset}`);
      expect(answer.status).toBe(400);
      expect(((await answer.json()) as { error: string }).error).toBe('invalid_return_params');
      expect(app.grants(attempt.sessionId)).toBe(0);
      expect((await app.attempt(attempt.sessionId))?.outcome).toBe('pending');
      expect(app.logs.some((line) => line.includes('JSON body must be UTF-8'))).toBe(true);
    },
  );

  it('the start with "action" given twice in UTF-16: 400, no session created, no SMS sent', async () => {
    const createsBefore = (await app.emulator.control.stats()).creates;
    const attemptsBefore = await app.attemptCount();
    const bytes = encoded(ACTION_GIVEN_TWICE, 'utf-16le');
    const answer = await postBytes(app, '/verify/start', bytes, 'application/json; charset=utf-16le');
    expect(answer.status).toBe(400);
    expect((await app.emulator.control.stats()).creates).toBe(createsBefore);
    expect(await app.attemptCount()).toBe(attemptsBefore);
  });

  it('a body declared UTF-8 (any spelling of the name, quoted or not) or naming no charset completes once', async () => {
    const attempt = await verifiedMobileAttempt(app);
    const once = Buffer.from(JSON.stringify({ session_id: attempt.sessionId, state: attempt.state }));
    for (const contentType of [
      'application/json; charset=UTF-8',
      'application/json;charset="utf-8"',
      'application/json',
    ]) {
      const answer = await postBytes(app, '/verify/mobile/complete', once, contentType);
      expect(answer.status).toBe(200);
    }
    expect(app.grants(attempt.sessionId)).toBe(1);
  });
});

/** The text in a UTF-16 encoding (`utf-16` as Node writes it: little-endian after a byte order mark). */
function encoded(text: string, charset: string): Buffer {
  const little = Buffer.from(text, 'utf16le');
  if (charset.toLowerCase() === 'utf-16le') return little;
  if (charset.toLowerCase() === 'utf-16') return Buffer.concat([Buffer.from([0xff, 0xfe]), little]);
  return Buffer.from(little).swap16();
}

describe("the mobile routes behind the app's own express.json(), mounted before the kit", () => {
  const mountFix = 'mount the kit before express.json()';
  let app: TestApp;
  let global: TestApp;
  beforeAll(async () => {
    const mobileReturnUrl = MOBILE_RETURN_URL;
    // One app parses the completion's body itself; the other parses every JSON body itself.
    app = await startTestApp({
      mobileReturnUrl,
      ownRoutes: (own) => own.use('/verify/mobile/complete', express.json()),
    });
    global = await startTestApp({ mobileReturnUrl, ownRoutes: (own) => own.use(express.json()) });
  });
  afterAll(async () => {
    await app?.close();
    await global?.close();
  });
  it('the completion refuses a body another parser read, where "state" given twice would pass: 500 saying where to mount the kit, nothing fulfilled', async () => {
    const attempt = await verifiedMobileAttempt(app);
    const answer = await postJson(app, '/verify/mobile/complete', stateGivenTwice(attempt));
    expect(answer.status).toBe(500);
    expect(app.grants(attempt.sessionId)).toBe(0);
    expect((await app.attempt(attempt.sessionId))?.outcome).toBe('pending');
    expect(app.logs.some((line) => line.includes(mountFix))).toBe(true);
  });

  it('the start refuses it too: 500 saying where to mount the kit, no session created, no SMS sent', async () => {
    const createsBefore = (await global.emulator.control.stats()).creates;
    const answer = await postJson(global, '/verify/start', ACTION_GIVEN_TWICE);
    expect(answer.status).toBe(500);
    expect((await global.emulator.control.stats()).creates).toBe(createsBefore);
    expect(await global.attemptCount()).toBe(0);
    expect(global.logs.some((line) => line.includes(mountFix))).toBe(true);
  });
});

describe("the mobile routes behind a parser that kept the body's text (req.rawBody, as Cloud Functions and a verify hook keep it)", () => {
  let app: TestApp;
  beforeAll(async () => {
    // The parser Stripe's webhooks document: express.json with a verify hook keeping the raw body.
    const keepRaw = express.json({
      verify: (req, _res, raw) => {
        (req as typeof req & { rawBody?: Buffer }).rawBody = raw;
      },
    });
    app = await startTestApp({
      mobileReturnUrl: MOBILE_RETURN_URL,
      ownRoutes: (own) => own.use(keepRaw),
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('the completion reads the kept text: "state" given twice is refused (400, nothing fulfilled), given once it completes once', async () => {
    const attempt = await verifiedMobileAttempt(app);
    expect((await postJson(app, '/verify/mobile/complete', stateGivenTwice(attempt))).status).toBe(400);
    expect(app.grants(attempt.sessionId)).toBe(0);
    const once = JSON.stringify({ session_id: attempt.sessionId, state: attempt.state });
    expect((await postJson(app, '/verify/mobile/complete', once)).status).toBe(200);
    expect(app.grants(attempt.sessionId)).toBe(1);
  });

  it('the completion refuses a kept text that is not UTF-8, where "state" given twice would not show: 400, nothing fulfilled', async () => {
    const attempt = await verifiedMobileAttempt(app);
    const bytes = encoded(stateGivenTwice(attempt), 'utf-16le');
    const answer = await postBytes(app, '/verify/mobile/complete', bytes, 'application/json; charset=utf-16le');
    expect(answer.status).toBe(400);
    expect(app.grants(attempt.sessionId)).toBe(0);
    expect((await app.attempt(attempt.sessionId))?.outcome).toBe('pending');
  });

  it('the start reads the kept text: "action" given twice is refused (400, no session created)', async () => {
    const createsBefore = (await app.emulator.control.stats()).creates;
    const answer = await postJson(app, '/verify/start', ACTION_GIVEN_TWICE);
    expect(answer.status).toBe(400);
    expect((await app.emulator.control.stats()).creates).toBe(createsBefore);
  });
});

describe('namesAKeyTwice', () => {
  it.each([
    ['{"a":1,"a":2}', true],
    ['{"a":1,"\\u0061":2}', true],
    ['{"o":{"a":1,"b":{"a":2}},"a":3}', false],
    ['{"o":{"a":1,"a":2}}', true],
    ['[{"a":1},{"a":2}]', false],
    ['[{"a":1,"a":2}]', true],
    ['{"a":"x\\",\\"a\\":{","b":["a","a"]}', false],
    ['{"s":"}{\\"a\\":1","a":2}', false],
    ['{}', false],
  ])('%s: %s', (text, twice) => {
    expect(namesAKeyTwice(text)).toBe(twice);
  });
});

describe('declaresUtf8', () => {
  it.each([
    [undefined, true],
    ['application/json', true],
    ['application/json; charset=UTF-8', true],
    ['application/json ; Charset = "utf-8"', true],
    ['application/json; charset=utf8', false],
    ['application/json; charset=utf-16le', false],
    ['application/json; charset=utf-8; charset=utf-16le', false],
    ['application/json; charset="utf\\-16le"', false],
    ['application/json; x="a;charset=utf-8"; charset=utf-7', false],
  ])('%s: %s', (contentType, utf8) => {
    expect(declaresUtf8(contentType)).toBe(utf8);
  });
});
