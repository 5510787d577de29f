/**
 * A scope's label in the page's language when both are named by a tag with a region or a script
 * (`pt-BR`, `zh-Hant`), written as tags are usually written: the "Confirm it's you" page of a
 * guarded route says what it opens in that language, not in English, whatever the case of the tag.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { describeEachAppStore } from '../support/app-stores.ts';

const LABEL = {
  en: 'see your recovery codes',
  'pt-BR': 'ver seus códigos de recuperação',
  'zh-Hant': '查看您的恢復代碼',
};

describeEachAppStore('step-up: a label in a language with a region', (_store, storeOptions) => {
  let app: TestApp | undefined;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: {
        scopes: [{ name: 'security', operationSensitivity: 'sensitive', label: LABEL }],
        messages: {
          'pt-BR': { stepUp: { purpose: (label: string) => `Você pediu para: ${label}.` } },
          'zh-Hant': { stepUp: { purpose: (label: string) => `您要求：${label}。` } },
        },
      },
      ownRoutes: (own, kit) => {
        own.get('/security', kit.requireRecentVerification({ scope: 'security', maxAge: 600 }), (_req, res) => {
          res.type('html').send('<!doctype html><title>Codes</title><h1>codes</h1>');
        });
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it.each([
    ['pt-BR', 'Você pediu para: ver seus códigos de recuperação.'],
    ['pt-br', 'Você pediu para: ver seus códigos de recuperação.'],
    ['zh-Hant', '您要求：查看您的恢復代碼。'],
    ['en', 'You asked to: see your recovery codes.'],
  ])('Accept-Language: %s shows the label in that language', async (language, shown) => {
    const user = await app!.agent().signIn(`label-${language}`);
    const page = await user.request('/security', {
      headers: { 'accept-language': language, 'sec-fetch-site': 'same-origin' },
    });
    expect(page.status).toBe(200);
    expect(page.body).toContain('name="intent"');
    expect(page.body).toContain(shown);
  });
});
