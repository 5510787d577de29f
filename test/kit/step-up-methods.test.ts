/**
 * The step-up guard and the request's method, on SQLite and on PostgreSQL: it reads the method as
 * Express routes it (case-insensitively, so a hand-written override's `delete` or `get` is guarded
 * as DELETE or GET), and a guard mounted with `app.use` never lets a method it does not know
 * (OPTIONS, PROPFIND, SEARCH) reach the handler without a grant. A page asked by HEAD is kept as
 * the GET it stands for: confirming brings the user back to the page.
 */
import express from 'express';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { confirmForm, SCOPES, TEN_MINUTES } from '../support/step-up.ts';

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

  it('a DELETE reached as `_method=delete` (lower case) without a grant runs nothing: the user is asked to confirm it’s them', async () => {
    const alice = await app!.agent().signIn('alice');
    const sameSite = { origin: alice.origin, 'sec-fetch-site': 'same-origin' };
    for (const method of ['delete', 'Delete']) {
      const answer = await alice.postForm('/own/account', { _method: method }, sameSite);
      expect(answer.body).toContain('Confirm it’s you');
      expect(answer.body).not.toContain('account deleted');
    }
    expect(ran.filter((r) => r.startsWith('account'))).toEqual([]);
  });

  it('a DELETE form through a hand-written override is kept, confirmed and run once, as through method-override', async () => {
    const user = await app!.agent().signIn('override-form');
    const sameOrigin = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
    const kept = await user.postForm('/own/account', { _method: 'delete' }, sameOrigin);
    expect(kept.status).toBe(200);
    expect(kept.body).toContain('Confirm it’s you');
    const form = confirmForm(kept.body);
    const landing = await user.request(
      await user.verifyOnHostedPage(await user.start(form.action, { intent: form.intent })),
    );
    const confirmPage = await user.request(landing.location!);
    expect(confirmPage.body).toContain('DELETE /own/account');
    const intentId = /name="_verify_kit_intent" value="([^"]+)"/.exec(confirmPage.body)![1]!;
    const confirm = () =>
      user.postForm('/own/account', { _csrf: user.csrf, _verify_kit_intent: intentId, _method: 'DELETE' }, sameOrigin);
    expect((await confirm()).body).toContain('account deleted');
    expect((await confirm()).status).toBe(409);
    expect(ran.filter((r) => r === 'account DELETE')).toHaveLength(1);
  });

  it('with a fresh grant, another site’s script posting a form whose `_method` a hand-written override reads is refused as its form is: the handler never runs', async () => {
    const user = await app!.agent().signIn('override-granted');
    const sameOrigin = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
    // The site's own script asks, gets the challenge, and verifies: a fresh grant of the scope.
    const challenged = await user.request('/own/account', {
      method: 'DELETE',
      headers: { ...sameOrigin, accept: 'application/json' },
    });
    const { intent } = await challenged.json<{ intent: string }>();
    expect((await user.request(await user.verifyOnHostedPage(await user.start('payout', { intent })))).status).toBe(
      303,
    );
    const deletedBefore = ran.filter((r) => r.startsWith('account')).length;
    // `fetch(url, { method: 'POST', mode: 'no-cors', credentials: 'include', body: '_method=delete' })`
    // from a sandboxed frame, in a browser without fetch metadata: the browser sent a simple POST.
    for (const [from, headers] of [
      ['Origin: null', { origin: 'null', accept: '*/*' }],
      ['no Origin', { accept: '*/*' }],
    ] as const) {
      const answer = await user.postForm('/own/account', { _method: 'delete' }, headers);
      expect(answer.status, from).toBe(403);
      expect(answer.body, from).not.toContain('account deleted');
    }
    expect(ran.filter((r) => r.startsWith('account'))).toHaveLength(deletedBefore);
    // The site's own script, with the grant fresh, goes straight through.
    const own = await user.request('/own/account', { method: 'DELETE', headers: { ...sameOrigin, accept: '*/*' } });
    expect(own.body).toContain('account deleted');
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

  it('a page asked by HEAD is kept as a GET: the page asked next shares its intent, and confirming it returns to the page', async () => {
    const user = await app!.agent().signIn('head-first');
    const path = '/own/codes?via=head';
    const head = await user.request(path, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    const kept = await app!.query<{ intent_id: string; method: string; path: string }>(
      'SELECT intent_id, method, path FROM verify_kit_intents WHERE user_ref = $1',
      ['user-head-first'],
    );
    expect(kept.map((k) => ({ method: k.method, path: k.path }))).toEqual([{ method: 'GET', path }]);
    // The page opened next (a link checker's HEAD, then the user's GET) renews that one intent.
    const page = await user.request(path);
    expect(confirmForm(page.body).intent).toBe(kept[0]!.intent_id);
    const started = await user.start(confirmForm(page.body).action, { intent: kept[0]!.intent_id });
    const landing = await user.request(await user.verifyOnHostedPage(started));
    expect(landing.status).toBe(303);
    expect(landing.location).toBe(path);
    expect((await user.request(path)).body).toContain('the codes themselves');
    expect(ran.filter((r) => r.startsWith('codes'))).toEqual(['codes GET']);
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
