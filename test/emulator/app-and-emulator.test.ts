/**
 * `startAppAndEmulator` from `hosted-sms-verify-kit/testing`: the app's server listens first, the
 * emulator registers its return URL, and a kit built from `kitOptions` fulfils a verification
 * walked through its own app, with no port chosen by hand.
 */
import BetterSqlite3 from 'better-sqlite3';
import express from 'express';
import session from 'express-session';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVerificationKit, type VerificationKit } from '../../middleware/index.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import { createTestBrowser, startAppAndEmulator, walkHostedPage, type AppAndEmulator } from '../../testing/testing.ts';

let stack: AppAndEmulator;
let kit: VerificationKit;
const fulfilled: string[] = [];

beforeAll(async () => {
  stack = await startAppAndEmulator();
  kit = createVerificationKit({
    ...stack.kitOptions,
    store: createSqliteStore({ database: new BetterSqlite3(':memory:') }),
    resolveUser: () => ({ userRef: 'user-1', destination: '+15550100001' }),
    actions: [
      {
        name: 'confirm_phone',
        operationSensitivity: 'normal',
        successPath: '/done',
        fulfil: (_tx, attempt) => void fulfilled.push(attempt.sessionId),
      },
    ],
  });
  const app = express();
  app.use(session({ secret: 'test-session-secret', resave: false, saveUninitialized: true }));
  app.get('/', (req, res) =>
    res.send(`<form method="post" action="/verify/start"><input type="hidden" name="_csrf" value="${kit.csrfToken(req)}">
<button name="action" value="confirm_phone">Confirm</button></form>`),
  );
  app.use(kit.router);
  stack.server.on('request', app);
});
afterAll(async () => {
  await kit?.close();
  await stack?.close();
});

describe('startAppAndEmulator', () => {
  it('registers the listening app’s return URL with the emulator; the kit built from kitOptions fulfils once', async () => {
    expect(stack.returnUrl).toBe(`${stack.appUrl}/verify/return`);
    expect(stack.appUrl).toMatch(/^http:\/\/localhost:\d+$/);
    const browser = createTestBrowser();
    const home = await browser.get(`${stack.appUrl}/`);
    const walked = await walkHostedPage(await browser.submitForm(home), { emulator: stack.emulator, browser });
    const landing = await browser.get(walked.landingUrl);
    expect(landing.location).toBe(`${stack.appUrl}/done`);
    expect(fulfilled).toEqual([walked.sessionId]);
  });
});
