/**
 * The `./testing` entry as an integrator's suite uses it: `startEmulator` returns `{ url, close,
 * control }`, and each typed control call does what it says against the running emulator;
 * `walkHostedPage` goes through the hosted page as a browser does and hands back the landing URL
 * with its real state; a `createTestClock()` shared by the kit and the emulator reaches the sweep's
 * first check without sleeping.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Database from 'better-sqlite3';
import express from 'express';
import session from 'express-session';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createTestBrowser,
  createTestClock,
  EmulatorControlError,
  emulatorControl,
  startEmulator,
  walkHostedPage,
  type RunningEmulator,
  type TestBrowser,
  type TestClock,
} from '../../testing/testing.ts';
import { createVerificationKit } from '../../middleware/index.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import { WEB_CLIENT, newSession, openHostedPage, readSession } from '../support/emulator.ts';

let emulator: RunningEmulator;
const PAGE_CLIENT = { clientId: 'page-shop', secret: 'page-shop-secret-0123456789', returnUrl: '' };
beforeAll(async () => {
  emulator = await startEmulator({ port: 0, clients: [WEB_CLIENT], log: () => {} });
});
afterAll(() => emulator.close());
beforeEach(() => emulator.control.reset());

describe('hosted-sms-verify-kit/testing', () => {
  it('completeSession ends a pending session as verified, which the status read then reports', async () => {
    const session = await newSession(emulator.url, WEB_CLIENT);
    await emulator.control.completeSession(session.sessionId, 'verified');
    expect((await readSession(emulator.url, WEB_CLIENT, session.sessionId)).body).toMatchObject({
      status: 'verified',
      state: session.state,
      userRef: session.userRef,
    });
  });

  it('completeSession ends a session as failed with the reason, and refuses a second ending with 409', async () => {
    const session = await newSession(emulator.url, WEB_CLIENT);
    await emulator.control.completeSession(session.sessionId, 'failed', 'otp_locked');
    expect((await readSession(emulator.url, WEB_CLIENT, session.sessionId)).body).toMatchObject({
      status: 'failed',
      reason: 'otp_locked',
    });
    const second = emulator.control.completeSession(session.sessionId, 'verified');
    await expect(second).rejects.toBeInstanceOf(EmulatorControlError);
    await expect(second).rejects.toMatchObject({ status: 409, code: 'session_already_ended' });
  });

  it('latestCode reads the newest code texted for a session or for a destination', async () => {
    const first = await newSession(emulator.url, WEB_CLIENT, { destination: '+15550100001' });
    const second = await newSession(emulator.url, WEB_CLIENT, { destination: '+15550100001' });
    const other = await newSession(emulator.url, WEB_CLIENT, { destination: '+15550100002' });
    const messages = await emulator.control.sentMessages();
    const codeOf = (sessionId: string) => messages.find((message) => message.sessionId === sessionId)!.code;

    expect(await emulator.control.latestCode({ sessionId: first.sessionId })).toBe(codeOf(first.sessionId));
    expect(await emulator.control.latestCode({ destination: '+15550100001' })).toBe(codeOf(second.sessionId));
    expect(await emulator.control.latestCode({ destination: '+15550100002' })).toBe(codeOf(other.sessionId));
    await expect(emulator.control.latestCode({ destination: '+15550100009' })).rejects.toMatchObject({
      code: 'no_sms_sent',
    });
  });

  it('advanceClock moves the virtual clock: a handoff older than 120 s is refused', async () => {
    const session = await newSession(emulator.url, WEB_CLIENT);
    await emulator.control.advanceClock(121);
    expect((await openHostedPage(session.verifyUrl, session.handoff)).response.status).toBe(400);
  });

  it('injectFaults makes the next create fail with the chosen status, and stats count what happened', async () => {
    expect(await emulator.control.injectFaults({ createFailures: 1, createStatus: 503 })).toMatchObject({
      createFailures: 1,
      createStatus: 503,
    });
    await expect(newSession(emulator.url, WEB_CLIENT)).rejects.toThrow(/create failed: 503/);
    await newSession(emulator.url, WEB_CLIENT);
    expect(await emulator.control.stats()).toMatchObject({ creates: 1, smsSent: 1 });
  });

  it('reset forgets messages and stats', async () => {
    await newSession(emulator.url, WEB_CLIENT);
    await emulator.control.reset();
    expect(await emulator.control.sentMessages()).toEqual([]);
    expect(await emulator.control.stats()).toMatchObject({ creates: 0, smsSent: 0 });
  });

  it('emulatorControl(url) drives an emulator started elsewhere; with control off it says how to fix it', async () => {
    const production = await startEmulator({ port: 0, clients: [WEB_CLIENT], control: false, log: () => {} });
    try {
      await expect(emulatorControl(production.url).stats()).rejects.toThrow(/started with control: true/);
      expect(await emulatorControl(`${emulator.url}/`).stats()).toMatchObject({ creates: 0 });
    } finally {
      await production.close();
    }
  });
});

/** An integrator's app on the kit, against `emulator`, with the clock the two share. */
async function integratorApp(emulatorUrl: string, clock: TestClock, returnUrl: string, server: Server) {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE confirmations (session_id TEXT PRIMARY KEY, user_id TEXT NOT NULL)');
  const kit = createVerificationKit({
    baseUrl: emulatorUrl,
    clientId: PAGE_CLIENT.clientId,
    clientSecret: PAGE_CLIENT.secret,
    returnUrl,
    store: createSqliteStore({ database: db }),
    resolveUser: () => ({ userRef: 'user-7', destination: '+15550100007' }),
    actions: [
      {
        name: 'confirm_phone',
        operationSensitivity: 'normal',
        successPath: '/done',
        fulfil: (tx, attempt) =>
          void tx.prepare('INSERT INTO confirmations VALUES (?, ?)').run(attempt.sessionId, attempt.userRef),
      },
    ],
    now: clock.now,
  });
  const app = express();
  app.use(session({ secret: 'a-test-session-secret', resave: false, saveUninitialized: false }));
  app.get('/', (req, res) => {
    res.send(`<form method="post" action="/verify/start"><input type="hidden" name="_csrf" value="${kit.csrfToken(req)}">
      <button name="action" value="confirm_phone">Confirm</button></form>`);
  });
  app.use(kit.router);
  server.on('request', app);
  const fulfilments = () => (db.prepare('SELECT count(*) AS n FROM confirmations').get() as { n: number }).n;
  return { kit, db, fulfilments };
}

describe('walkHostedPage and the shared test clock, against an app on the kit', () => {
  let pageEmulator: RunningEmulator;
  let clock: TestClock;
  let server: Server;
  let origin: string;
  let app: Awaited<ReturnType<typeof integratorApp>>;

  beforeAll(async () => {
    server = createServer();
    const port = await new Promise<number>((resolve) =>
      server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
    );
    origin = `http://localhost:${port}`;
    PAGE_CLIENT.returnUrl = `${origin}/verify/return`;
    clock = createTestClock();
    // The hosted page on verify.localhost, where passkeys work; the browser reaches it on loopback.
    pageEmulator = await startEmulator({
      port: 0,
      clients: [PAGE_CLIENT],
      pageHost: 'verify.localhost',
      clock,
      log: () => {},
    });
    app = await integratorApp(pageEmulator.url, clock, PAGE_CLIENT.returnUrl, server);
  });
  afterAll(async () => {
    await app.kit.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await pageEmulator.close();
    app.db.close();
  });

  const start = async (browser: TestBrowser) => browser.submitForm(await browser.get(`${origin}/`));

  it('returns the landing URL with the state the kit stored; the landing fulfils once and a reload does not again', async () => {
    const browser = createTestBrowser();
    const before = app.fulfilments();
    const walked = await walkHostedPage(await start(browser), { emulator: pageEmulator, browser });
    expect(walked).toMatchObject({ outcome: 'verified', via: 'sms' });
    expect(walked.landingUrl).toBe(
      `${PAGE_CLIENT.returnUrl}?session_id=${encodeURIComponent(walked.sessionId)}&state=${encodeURIComponent(walked.state)}`,
    );
    expect((await app.kit.attempts.get(walked.sessionId))?.outcome).toBe('pending');
    const landing = await browser.get(walked.landingUrl);
    expect([landing.status, landing.location]).toEqual([303, `${origin}/done`]);
    expect(app.fulfilments()).toBe(before + 1);
    expect((await browser.get(walked.landingUrl)).location).toBe(`${origin}/done`);
    expect(app.fulfilments()).toBe(before + 1);
  });

  it('with wrong codes the page gives up (otp_locked) and the landing fulfils nothing', async () => {
    const browser = createTestBrowser();
    const before = app.fulfilments();
    const walked = await walkHostedPage(await start(browser), { emulator: pageEmulator, browser, code: 'wrong' });
    expect(walked.outcome).toBe('failed');
    await browser.get(walked.landingUrl);
    expect(app.fulfilments()).toBe(before);
    expect((await app.kit.attempts.get(walked.sessionId))?.outcome).toBe('failed');
  });

  it('a passkey saved on the offer is used the next time: no SMS is sent, and the landing fulfils', async () => {
    const browser = createTestBrowser();
    await walkHostedPage(await start(browser), { emulator: pageEmulator, browser, passkeyOffer: 'save' });
    const smsBefore = (await pageEmulator.control.stats()).smsSent;
    const before = app.fulfilments();
    const walked = await walkHostedPage(await start(browser), { emulator: pageEmulator, browser });
    expect(walked).toMatchObject({ outcome: 'verified', via: 'passkey' });
    expect((await pageEmulator.control.stats()).smsSent).toBe(smsBefore);
    expect((await browser.get(walked.landingUrl)).location).toBe(`${origin}/done`);
    expect(app.fulfilments()).toBe(before + 1);
  });

  it('a closed tab is swept once the shared clock passes the first check, with no sleep', async () => {
    const browser = createTestBrowser();
    const before = app.fulfilments();
    const walked = await walkHostedPage(await start(browser), { emulator: pageEmulator, browser, passkey: 'sms' });
    // The tab closes here: nobody opens walked.landingUrl.
    expect((await app.kit.runSweep()).fulfilled).toBe(0);
    clock.advance({ seconds: 181 });
    const report = await app.kit.runSweep();
    expect(report.fulfilled).toBe(1);
    expect(app.fulfilments()).toBe(before + 1);
    expect((await app.kit.attempts.get(walked.sessionId))?.outcome).toBe('fulfilled');
  });

  it('the clock names its unit in the call: advance({ seconds }) moves now; a bare number or a step back is refused with the fix', () => {
    const own = createTestClock();
    const before = own.now();
    own.advance({ seconds: 90 });
    expect(own.now() - before).toBeGreaterThanOrEqual(90_000);
    expect(own.now() - before).toBeLessThan(95_000);
    expect(() => own.advance(181 as never)).toThrow('advance names its unit: advance({ seconds: 181 })');
    expect(() => own.advance({ seconds: -1 })).toThrow(RangeError);
  });

  it('an advance past 9999-12-31 is refused with a RangeError saying so, and the clock stays where it was', () => {
    const own = createTestClock();
    own.advance({ seconds: 60 });
    const before = own.now();
    expect(() => own.advance({ seconds: 3e11 })).toThrow(/past 9999-12-31/);
    expect(() => own.advance({ seconds: 1e300 })).toThrow(RangeError);
    expect(own.now() - before).toBeLessThan(5_000);
    // A date can still be written from it.
    expect(new Date(own.now()).toISOString()).toMatch(/^\d{4}-/);
  });
});

describe('submitForm', () => {
  it('posts the form whose fields include `having`: two start forms posting to one URL are told apart by their action', async () => {
    const form = (action: string) =>
      `<form method="post" action="/verify/start"><input type="hidden" name="_csrf" value="t"><input type="hidden" name="action" value="${action}"><button>Go</button></form>`;
    const posted: string[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        if (req.method === 'POST') posted.push(body);
        res.setHeader('content-type', 'text/html').end(`${form('add_phone')}${form('change_phone')}`);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const browser = createTestBrowser();
      const loaded = await browser.get(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      await browser.submitForm(loaded, {}, { action: '/verify/start', having: { action: 'change_phone' } });
      await browser.submitForm(loaded, {}, { action: '/verify/start' });
      expect(posted.map((body) => new URLSearchParams(body).get('action'))).toEqual(['change_phone', 'add_phone']);
      await expect(browser.submitForm(loaded, {}, { having: { action: 'delete_account' } })).rejects.toThrow(
        'No form with the action asked for',
      );
    } finally {
      server.close();
    }
  });
  it("submits what a browser submits when the first submit button is pressed: not a disabled field nor a type=button, to the button's formaction; a GET form as a query", async () => {
    const pages: Record<string, string> = {
      '/post': `<form method=post action=/pay><input type=hidden name=_csrf value=t><input type=hidden name=amount value=9000 disabled><button type=button name=intent value=preview>Preview</button><button name=intent value=confirm formaction=/pay/confirm>Pay</button></form>`,
      '/search': `<form action="/find?old=1"><input name=q value=shoes><input type=checkbox name=used><button>Find</button></form>`,
    };
    const received: string[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        received.push(`${req.method} ${req.url} ${body}`);
        res.setHeader('content-type', 'text/html').end(pages[req.url ?? ''] ?? 'done');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const browser = createTestBrowser();
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      await browser.submitForm(await browser.get(`${origin}/post`));
      await browser.submitForm(await browser.get(`${origin}/search`));
      expect(received).toEqual([
        'GET /post ',
        'POST /pay/confirm _csrf=t&intent=confirm',
        'GET /search ',
        'GET /find?q=shoes ',
      ]);
    } finally {
      server.close();
    }
  });
});

/** A server answering `pages` by path, keeping each request's method, path, content type and body. */
async function recordingServer(pages: Record<string, string>) {
  const received: { line: string; type: string; body: string }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      received.push({ line: `${req.method} ${req.url}`, type: req.headers['content-type'] ?? '', body });
      res.setHeader('content-type', 'text/html').end(pages[req.url ?? ''] ?? 'done');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { received, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** A multipart body's entries as the app's parser reads them (a file as `file:` and its name). */
async function multipartEntries(type: string, body: string): Promise<string[][]> {
  const form = await new Response(body, { headers: { 'content-type': type } }).formData();
  return [...form.entries()].map(([name, value]) => [name, typeof value === 'string' ? value : `file:${value.name}`]);
}

describe('submitForm sends every entry, in the encoding the form asks for', () => {
  it('sends every value of a repeated name in order, and a field given replaces every value of its name', async () => {
    const { received, origin, server } = await recordingServer({
      '/tags': `<form method=post action=/save><input type=hidden name=tag value=a><select name=tag multiple><option selected>b</option><option selected>c</option></select><input type=checkbox name=tag value=d checked><input type=hidden name=id value=7><button>Save</button></form>`,
    });
    try {
      const browser = createTestBrowser();
      const page = await browser.get(`${origin}/tags`);
      await browser.submitForm(page);
      await browser.submitForm(page, { tag: 'z', extra: '1' });
      expect(received.slice(1).map((r) => `${r.line} ${r.body}`)).toEqual([
        'POST /save tag=a&tag=b&tag=c&tag=d&id=7',
        'POST /save tag=z&id=7&extra=1',
      ]);
    } finally {
      server.close();
    }
  });

  it("posts multipart/form-data or text/plain when the form's enctype or the button's formenctype asks for it", async () => {
    const { received, origin, server } = await recordingServer({
      '/upload': `<form method=post action=/up enctype=multipart/form-data><input type=hidden name=_csrf value=t><input type=hidden name=tag value=a><input type=hidden name=tag value=b><input type=file name=doc><button>Send</button></form>`,
      '/plain': `<form method=post action=/note><input type=hidden name=note value=hi><button formenctype=text/plain>Send</button></form>`,
    });
    try {
      const browser = createTestBrowser();
      await browser.submitForm(await browser.get(`${origin}/upload`), { tag: 'c' });
      await browser.submitForm(await browser.get(`${origin}/plain`));
      const [, upload, , plain] = received;
      expect(upload?.type).toMatch(/^multipart\/form-data; boundary=/);
      expect(await multipartEntries(upload?.type ?? '', upload?.body ?? '')).toEqual([
        ['_csrf', 't'],
        ['tag', 'c'],
        ['doc', 'file:'],
      ]);
      expect([plain?.line, plain?.type, plain?.body]).toEqual(['POST /note', 'text/plain', 'note=hi\r\n']);
    } finally {
      server.close();
    }
  });

  it('refuses a method=dialog form, which a browser closes instead of submitting, and sends nothing', async () => {
    const { received, origin, server } = await recordingServer({
      '/dialog': `<dialog open><form method=dialog><button name=ok value=1>OK</button></form></dialog>`,
    });
    try {
      const browser = createTestBrowser();
      const page = await browser.get(`${origin}/dialog`);
      await expect(browser.submitForm(page)).rejects.toThrow(/method=dialog.*closes its dialog.*sends nothing/);
      expect(received.map((r) => r.line)).toEqual(['GET /dialog']);
    } finally {
      server.close();
    }
  });
});

describe('the test helpers’ error messages', () => {
  it('quote the start of a page without its hidden fields: a handoff in an auto-submit page stays out of the test log', async () => {
    const handoff = 'hx-4f1d2c9a8b7e6d5c4b3a29181716151413121110';
    const page = `<!doctype html><form method="post" action="https://verify.example/verify"><input type="hidden" name="hx" value="${handoff}"><input type="hidden" name="_csrf" value="csrf-token-1"><button>Continue</button></form>`;
    const server = createServer((_req, res) => res.setHeader('content-type', 'text/html').end(page));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const browser = createTestBrowser();
      const loaded = await browser.get(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      const failed = await browser.submitForm(loaded, {}, { action: '/elsewhere' }).then(
        () => new Error('submitForm found a form posting to /elsewhere'),
        (error: unknown) => error as Error,
      );
      expect(failed.message).toContain('No form posting to /elsewhere');
      expect(failed.message).toContain('name="hx" value="…"');
      expect(failed.message).not.toContain(handoff);
      expect(failed.message).not.toContain('csrf-token-1');
    } finally {
      server.close();
    }
  });

  it("leave out a hidden field's value however the app writes it: quotes, attribute order, case, spaces, a > in the value", async () => {
    // Each page's CSRF token, and how the app writes its field.
    const pages: Record<string, string> = {
      'csrf-single-4e1b': `<input type='hidden' name='_csrf' value='csrf-single-4e1b'>`,
      'csrf-bare-7c2d': '<input type=hidden name=_csrf value=csrf-bare-7c2d>',
      'csrf-order-9a3f': '<input value="csrf-order-9a3f" name="_csrf" type="hidden">',
      'csrf-upper-2b8e': '<INPUT TYPE=HIDDEN NAME=_csrf VALUE="csrf-upper-2b8e">',
      'csrf-spaced-6d5a': `<input type = 'Hidden' name="_csrf" value = "csrf-spaced-6d5a" />`,
      'csrf>angle-1f0c': '<input name="_csrf" value="csrf>angle-1f0c" type="hidden">',
      'csrf-encoded-3c7b': '<input type="&#104;idden" name="_csrf" value="csrf-encoded-3c7b">',
    };
    const server = createServer((req, res) => {
      // The page's number in the URL: the message quotes the URL.
      const field = Object.values(pages)[Number((req.url ?? '/').slice(1))] ?? '';
      res
        .setHeader('content-type', 'text/html')
        .end(
          `<form method="post" action="/next">${field}<input type="text" name="q" value="typed-by-user"><button>Go</button></form>`,
        );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const browser = createTestBrowser();
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      for (const [index, token] of Object.keys(pages).entries()) {
        const loaded = await browser.get(`${origin}/${index}`);
        const failed = await browser.submitForm(loaded, {}, { action: '/elsewhere' }).then(
          () => new Error('submitForm found a form posting to /elsewhere'),
          (error: unknown) => error as Error,
        );
        expect(failed.message, token).toContain('No form posting to /elsewhere');
        expect(failed.message, token).toMatch(/value="…"/);
        expect(failed.message, token).not.toContain(token);
        // Nor any part of it (its own last four characters are each token's alone).
        expect(failed.message, token).not.toContain(token.slice(-4));
        // A field the user sees keeps its value: the excerpt still shows the page.
        expect(failed.message, token).toContain('value="typed-by-user"');
      }
    } finally {
      server.close();
    }
  });

  it('submitForm sends a hidden field however the app writes it: quotes, attribute order, case, spaces, a > in the value', async () => {
    // How the app writes its CSRF field, and the token a browser sends.
    const fields: [string, string][] = [
      [`<input type='hidden' name='_csrf' value='csrf-single'>`, 'csrf-single'],
      ['<input type=hidden name=_csrf value=csrf-bare>', 'csrf-bare'],
      ['<input value="csrf-order" name="_csrf" type="hidden">', 'csrf-order'],
      ['<INPUT TYPE=HIDDEN NAME=_csrf VALUE="csrf-upper">', 'csrf-upper'],
      [`<input type = 'Hidden' name="_csrf" value = "csrf-spaced" />`, 'csrf-spaced'],
      ['<input name="_csrf" value="csrf>angle" type="hidden">', 'csrf>angle'],
      ['<input type="&#104;idden" name="_csrf" value="csrf-&amp;-encoded">', 'csrf-&-encoded'],
    ];
    const server = createServer((req, res) => {
      if (req.method === 'POST') {
        // The body the browser submitted, as the page.
        let body = '';
        req.on('data', (chunk: Buffer) => (body += chunk.toString()));
        req.on('end', () => res.setHeader('content-type', 'text/plain').end(body));
        return;
      }
      const [field = ''] = fields[Number((req.url ?? '/').slice(1))] ?? [];
      res
        .setHeader('content-type', 'text/html')
        .end(`<form method='post' action='/next'>${field}<input type="text" name="q"><button>Go</button></form>`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const browser = createTestBrowser();
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      for (const [index, [field, token]] of fields.entries()) {
        const sent = await browser.submitForm(await browser.get(`${origin}/${index}`), { q: 'typed' });
        expect(new URL(sent.url).pathname, field).toBe('/next');
        expect(Object.fromEntries(new URLSearchParams(sent.html)), field).toEqual({ _csrf: token, q: 'typed' });
      }
    } finally {
      server.close();
    }
  });

  it("leave out a CSRF token a page gives in a meta tag (Rails', Laravel's csrf-token, however written)", async () => {
    const metas: [string, string][] = [
      ['<meta name="csrf-token" content="meta-token-5e2a">', 'meta-token-5e2a'],
      ["<META CONTENT='meta-token-8b1d' NAME='CSRF-Token'>", 'meta-token-8b1d'],
      ['<meta name=_csrf content=meta-token-3f9c>', 'meta-token-3f9c'],
      ['<meta name="xsrf-token" content="meta&#45;token-7a4e">', 'meta-token-7a4e'],
    ];
    const server = createServer((req, res) => {
      const [meta = ''] = metas[Number((req.url ?? '/').slice(1))] ?? [];
      res
        .setHeader('content-type', 'text/html')
        .end(
          `<head>${meta}<meta name="description" content="A shop"></head><form method="post" action="/next"></form>`,
        );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const browser = createTestBrowser();
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      for (const [index, [meta, token]] of metas.entries()) {
        const failed = await browser
          .submitForm(await browser.get(`${origin}/${index}`), {}, { action: '/elsewhere' })
          .then(
            () => new Error('submitForm found a form posting to /elsewhere'),
            (error: unknown) => error as Error,
          );
        expect(failed.message, meta).toContain('No form posting to /elsewhere');
        expect(failed.message, meta).not.toContain(token.slice(-4));
        // Other meta tags keep what they say.
        expect(failed.message, meta).toContain('content="A shop"');
      }
    } finally {
      server.close();
    }
  });
});
