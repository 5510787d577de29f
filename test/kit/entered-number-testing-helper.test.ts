/**
 * `verifyEnteredNumber` from `hosted-sms-verify-kit/testing`: a test starts an action with
 * `destination: 'entered'` with the number as an argument, typed as a user types it; the helper
 * submits the app's form, walks the hosted page with the code texted to that number, opens the
 * landing, and says which number the service texted. On SQLite and on PostgreSQL.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ActionDefinition, VerifiedAttempt } from '../../middleware/index.ts';
import { createTestBrowser, verifyEnteredNumber } from '../../testing/testing.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { GENEROUS_START_LIMITS } from '../support/limits.ts';

const fulfilled: VerifiedAttempt[] = [];
const entered = (name: string): ActionDefinition<unknown> => ({
  name,
  operationSensitivity: 'normal',
  successPath: `/done/${name}`,
  destination: 'entered',
  proves: 'destination',
  fulfil: (_tx, attempt) => void fulfilled.push(attempt),
});

describeEachAppStore('verifyEnteredNumber', (_store, storeOptions) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: {
        actions: [entered('add_phone'), entered('change_phone')],
        defaultCountry: 'GB',
        limits: GENEROUS_START_LIMITS,
      },
      // The app's own page: two typed-number forms, and one without a number field.
      ownRoutes: (express, kit) => {
        express.get('/phone', (req, res) => {
          const form = (action: string, number: boolean) =>
            `<form method="post" action="/verify/start"><input type="hidden" name="_csrf" value="${kit.csrfToken(req)}">` +
            `<input type="hidden" name="action" value="${action}">` +
            (number ? '<label for="p">Number</label><input id="p" name="phone" type="tel">' : '') +
            '<button>Go</button></form>';
          res
            .type('html')
            .send(`<!doctype html><title>Phone</title>${form('add_phone', true)}${form('change_phone', true)}`);
        });
        // The same form as a template writes it with single quotes or none.
        express.get('/phone-quoted-otherwise', (req, res) => {
          res
            .type('html')
            .send(
              `<!doctype html><title>Phone</title><form method=post action='/verify/start'>` +
                `<input type=hidden name=_csrf value='${kit.csrfToken(req)}'><input type='hidden' name='action' value='add_phone'>` +
                `<input id=p name=phone type=tel><button>Go</button></form>`,
            );
        });
        // The number field laid out apart from its form, joined to it with form=.
        express.get('/phone-outside', (req, res) => {
          res
            .type('html')
            .send(
              `<!doctype html><title>Phone</title><form id=number method=post action=/verify/start>` +
                `<input type=hidden name=_csrf value='${kit.csrfToken(req)}'><input type=hidden name=action value=change_phone>` +
                `<button>Go</button></form><p><input name=phone type=tel form=number></p>`,
            );
        });
        express.get('/plain', (req, res) => {
          res
            .type('html')
            .send(
              `<!doctype html><title>Plain</title><form method="post" action="/verify/start">` +
                `<input type="hidden" name="_csrf" value="${kit.csrfToken(req)}"><button>Go</button></form>`,
            );
        });
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  async function signedIn(name: string) {
    const browser = createTestBrowser();
    expect((await browser.post(`${app.url}/test/login`, { user: name }, app.url)).status).toBe(200);
    return browser;
  }

  it('takes the number as typed, texts its E.164 form, and the landing fulfils the action with it once', async () => {
    const browser = await signedIn('alice');
    const result = await verifyEnteredNumber(`${app.url}/phone`, '07400 123456', { browser, emulator: app.emulator });
    expect(result.textedTo).toBe('+447400123456');
    expect(result.outcome).toBe('verified');
    expect(result.landing.location).toBe(`${app.url}/done/add_phone`);
    expect(fulfilled.filter((a) => a.sessionId === result.sessionId).map((a) => a.destination)).toEqual([
      '+447400123456',
    ]);
  });

  it('finds the number field however the page quotes its attributes (single quotes, none)', async () => {
    const browser = await signedIn('carol');
    const result = await verifyEnteredNumber(`${app.url}/phone-quoted-otherwise`, '07400 123457', {
      browser,
      emulator: app.emulator,
    });
    expect(result.textedTo).toBe('+447400123457');
    expect(result.outcome).toBe('verified');
  });

  it('finds a number field outside the form element that names the form with form=, as a browser submits it', async () => {
    const browser = await signedIn('dave');
    const result = await verifyEnteredNumber(`${app.url}/phone-outside`, '07400 123458', {
      browser,
      emulator: app.emulator,
      action: 'change_phone',
    });
    expect(result.textedTo).toBe('+447400123458');
    expect((await app.attempt(result.sessionId))?.action).toBe('change_phone');
  });

  it('submits the form of the action it is given, and reports a failed walk without fulfilling', async () => {
    const browser = await signedIn('bob');
    const page = await browser.get(`${app.url}/phone`);
    const result = await verifyEnteredNumber(page, '+33 6 12 34 56 78', {
      browser,
      emulator: app.emulator,
      action: 'change_phone',
      code: 'wrong',
    });
    expect(result.textedTo).toBe('+33612345678');
    expect(result.outcome).toBe('failed');
    expect((await app.attempt(result.sessionId))?.action).toBe('change_phone');
    expect(fulfilled.some((a) => a.sessionId === result.sessionId)).toBe(false);
  });

  it('rejects, saying why, a number the app refuses and a page without a number form', async () => {
    const browser = await signedIn('carol');
    await expect(
      verifyEnteredNumber(`${app.url}/phone`, 'not a number', { browser, emulator: app.emulator }),
    ).rejects.toThrow(/did not start a verification for that number \(.* answered 422\)/);
    await expect(
      verifyEnteredNumber(`${app.url}/plain`, '07400 123457', { browser, emulator: app.emulator }),
    ).rejects.toThrow(/no form with a `phone` field/);
  });
});
