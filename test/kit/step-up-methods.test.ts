/**
 * The step-up guard and the request's method, on SQLite and on PostgreSQL: it reads the method as
 * Express routes it (case-insensitively, so a hand-written override's `delete` or `get` is guarded
 * as DELETE or GET), and a guard mounted with `app.use` never lets a method it does not know
 * (OPTIONS, PROPFIND, SEARCH) reach the handler without a grant.
 */
import express from 'express';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { SCOPES, TEN_MINUTES } from '../support/step-up.ts';

describeEachAppStore('step-up and the request method', (_store, storeOptions) => {
  let app: TestApp | undefined;
  const ran: string[] = [];
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: { scopes: [...SCOPES] },
      ownRoutes: (a, kit) => {
        // A common hand-written override: the form's `_method` as sent, lower case included.
        a.use('/own', express.urlencoded({ extended: false }), (req, _res, next) => {
          const body = req.body as { _method?: unknown } | undefined;
          if (typeof body?._method === 'string') req.method = body._method;
          next();
        });
        a.delete('/own/account', kit.requireRecentVerification({ scope: 'payout', maxAge: 300 }), (req, res) => {
          ran.push(`account ${req.method}`);
          res.type('html').send('<h1>account deleted</h1>');
        });
        a.get('/own/codes', kit.requireRecentVerification({ scope: 'security', maxAge: TEN_MINUTES }), (req, res) => {
          ran.push(`codes ${req.method}`);
          res.type('html').send('<h1>the codes themselves</h1>');
        });
        a.use('/vault', kit.requireRecentVerification({ scope: 'security', maxAge: TEN_MINUTES }), (req, res) => {
          ran.push(`vault ${req.method}`);
          res.type('html').send('<h1>vault contents</h1>');
        });
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('a DELETE reached as `_method=delete` (lower case) without a grant runs nothing', async () => {
    const alice = await app!.agent().signIn('alice');
    const sameSite = { origin: alice.origin, 'sec-fetch-site': 'same-origin' };
    for (const method of ['delete', 'Delete']) {
      const answer = await alice.postForm('/own/account', { _method: method }, sameSite);
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer.body).not.toContain('account deleted');
    }
    expect(ran.filter((r) => r.startsWith('account'))).toEqual([]);
  });

  it('a guarded GET page reached as `_method=get` answers "Confirm it’s you", never its content', async () => {
    const alice = await app!.agent().signIn('alice');
    const answer = await alice.postForm(
      '/own/codes',
      { _method: 'get' },
      { origin: alice.origin, 'sec-fetch-site': 'same-origin' },
    );
    expect(answer.body).not.toContain('the codes themselves');
    expect(answer.body).toContain('Confirm it’s you');
    expect(ran.filter((r) => r.startsWith('codes'))).toEqual([]);
  });

  it('a guard mounted with app.use answers OPTIONS, PROPFIND and SEARCH without a grant with a refusal, never the content', async () => {
    const alice = await app!.agent().signIn('alice');
    const sameSite = { origin: alice.origin, 'sec-fetch-site': 'same-origin' };
    for (const method of ['OPTIONS', 'PROPFIND', 'SEARCH']) {
      for (const accept of ['text/html', '*/*']) {
        const answer = await alice.request('/vault', { method, headers: { ...sameSite, accept } });
        expect([400, 401], `${method} (Accept: ${accept})`).toContain(answer.status);
        expect(answer.body).not.toContain('vault contents');
      }
    }
    expect((await alice.request('/vault')).body).toContain('Confirm it’s you');
    expect(ran.filter((r) => r.startsWith('vault'))).toEqual([]);
  });
});
