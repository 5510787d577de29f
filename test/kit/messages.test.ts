/**
 * The messages module: per-locale texts merged over English, the locale chosen by `locale(req)` or
 * `Accept-Language` (a region falls back to its language, anything else to English), failure
 * reasons and error codes mapped to texts with generic fallbacks, and the options validated.
 */
import express from 'express';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { createVerificationKit, englishMessages, errorText, failureText, isKitError } from '../../middleware/index.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import { createMessageCatalog, type KitMessagesInput, type LocaleChooser } from '../../middleware/pages/messages.ts';
import { sendPage } from '../../middleware/pages/page-headers.ts';

const FRENCH: KitMessagesInput = { startNew: 'Recommencer', failures: { generic: { title: 'Échec', text: 'Raté.' } } };

/** What a request with these headers gets: the lang and one text of its messages. */
async function chosen(headers: Record<string, string>, chooser?: LocaleChooser) {
  const catalog = createMessageCatalog({ fr: FRENCH, 'pt-BR': { startNew: 'Começar de novo' } }, chooser);
  const app = express().get('/', (req, res) => {
    const messages = catalog.forRequest(req);
    res.json({ lang: messages.lang, startNew: messages.startNew, nothingChanged: messages.nothingChanged });
  });
  return (await request(app).get('/').set(headers)).body as { lang: string; startNew: string; nothingChanged: string };
}

describe('locale choice', () => {
  it('Accept-Language picks the best available locale; English without one or for anything unknown', async () => {
    const french = await chosen({ 'accept-language': 'fr-FR,fr;q=0.9,en;q=0.5' });
    expect(french).toMatchObject({ lang: 'fr', startNew: 'Recommencer' });
    const english = await chosen({ 'accept-language': 'de-DE, en;q=0.3' });
    expect(english).toMatchObject({ lang: 'en', startNew: 'Start a new verification' });
    expect(await chosen({ 'accept-language': 'de-DE' })).toMatchObject({ lang: 'en' });
    expect(await chosen({})).toMatchObject({ lang: 'en' });
    expect(await chosen({ 'accept-language': 'pt-BR' })).toMatchObject({ lang: 'pt-BR', startNew: 'Começar de novo' });
  });

  it('a partial locale falls back to English for the texts it does not give', async () => {
    expect(await chosen({ 'accept-language': 'fr' })).toMatchObject({ nothingChanged: englishMessages.nothingChanged });
  });

  it("the integrator's locale(req) wins over Accept-Language; a region falls back to its language", async () => {
    const fromHeader: LocaleChooser = (req) => req.get('x-user-language');
    const region = await chosen({ 'accept-language': 'en', 'x-user-language': 'fr-CA' }, fromHeader);
    expect(region).toMatchObject({ lang: 'fr' });
    const unknown = await chosen({ 'accept-language': 'fr', 'x-user-language': 'xx' }, fromHeader);
    expect(unknown).toMatchObject({ lang: 'en' });
    expect(await chosen({ 'accept-language': 'fr' }, () => undefined)).toMatchObject({ lang: 'en' });
  });
});

describe('pages say their language varies', () => {
  it("a kit page adds Accept-Language to Vary, keeping what the app's own middleware put there", async () => {
    const app = express()
      .get('/own', (_req, res) => sendPage(res, 200, '<p>page</p>', 'nonce'))
      .get('/shared', (_req, res) => {
        res.vary('Origin');
        sendPage(res, 200, '<p>page</p>', 'nonce');
      });
    expect((await request(app).get('/own')).headers.vary).toBe('Accept-Language');
    expect((await request(app).get('/shared')).headers.vary).toBe('Origin, Accept-Language');
  });
});

describe('one language', () => {
  it('English only: every request gets it whatever Accept-Language says, without negotiating', () => {
    const negotiated: unknown[] = [];
    const req = {
      acceptsLanguages: (tags: unknown) => negotiated.push(tags),
      headers: { 'accept-language': 'fr, de;q=0.5' },
    } as unknown as express.Request;
    const onlyEnglish = createMessageCatalog(undefined, undefined);
    expect(onlyEnglish.forRequest(req)).toBe(englishMessages);
    const ownEnglish = createMessageCatalog({ en: { startNew: 'Begin again' } }, undefined);
    expect(ownEnglish.forRequest(req).startNew).toBe('Begin again');
    expect(negotiated).toEqual([]);
    // With a second language the header is negotiated again.
    createMessageCatalog({ fr: FRENCH }, undefined).forRequest(req);
    expect(negotiated).toEqual([['en', 'fr']]);
  });
});

describe('texts for reasons and codes', () => {
  it('known failure reasons have their own text; unknown ones (prototype names too) the generic one', () => {
    expect(failureText(englishMessages, 'otp_locked').title).toBe('Too many incorrect codes');
    expect(failureText(englishMessages, 'expired').title).toBe('Verification expired');
    for (const reason of ['brand_new_reason', 'constructor', '__proto__', 'toString', '']) {
      expect(failureText(englishMessages, reason), reason).toBe(englishMessages.failures.generic);
    }
  });

  it('error codes map to their text; unknown codes to the client or server fallback', () => {
    expect(errorText(englishMessages, 'csrf_failed', 403)).toBe(englishMessages.errors.csrf_failed);
    expect(errorText(englishMessages, 'some_new_code', 409)).toBe(englishMessages.errors.client_error);
    expect(errorText(englishMessages, 'some_new_code', 503)).toBe(englishMessages.errors.server_error);
    expect(errorText(englishMessages, 'hasOwnProperty', 400)).toBe(englishMessages.errors.client_error);
  });
});

describe('options', () => {
  const store = createSqliteStore({ database: ':memory:' });
  afterAll(async () => {
    await store.close();
  });
  const base = {
    baseUrl: 'http://127.0.0.1:9',
    clientId: 'client-1',
    clientSecret: 'secret-value-1234',
    returnUrl: 'http://localhost:3000/verify/return',
    store,
    actions: [{ name: 'grant_badge', operationSensitivity: 'normal' as const, successPath: '/done', fulfil: () => {} }],
    resolveUser: () => null,
  };

  it('refuses a bad messages object or locale with a message naming the fix', () => {
    const bad = { ...base, messages: { 'not a tag': {}, fr: 'bonjour' } as never, locale: 'fr' as never };
    let message = '';
    try {
      createVerificationKit(bad);
    } catch (error) {
      expect(isKitError(error, 'invalid_options')).toBe(true);
      message = (error as Error).message;
    }
    expect(message).toContain('`messages` key "not a tag" must be a locale tag');
    expect(message).toContain('`messages.fr` must be an object of texts');
    expect(message).toContain('`locale` must be a function');
  });

  it('accepts locales and a chooser', async () => {
    const kit = createVerificationKit({ ...base, messages: { fr: FRENCH }, locale: () => 'fr' });
    await kit.close();
  });
});
