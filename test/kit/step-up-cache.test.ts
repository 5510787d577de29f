/**
 * What a guarded route serves once the guard lets it through is the content the step-up protects
 * (recovery codes, an export, the result of a confirmed form): the guard marks it `no-store`, so no
 * browser's history or shared cache keeps it to be shown again after the grant expired or the user
 * signed out, and `X-Frame-Options: SAMEORIGIN` unless the app set its own framing policy, so no
 * other site (a sibling subdomain) frames it for a click that rides the grant. A handler that
 * wants its own caching still sets it. On SQLite and PostgreSQL.
 */
import type express from 'express';
import { expect, it } from 'vitest';
import type { Agent } from '../support/agent.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { confirmForm, TEN_MINUTES, useStepUpApp } from '../support/step-up.ts';

describeEachAppStore('what a guarded route serves is never stored', (_store, storeOptions) => {
  const suite = useStepUpApp(storeOptions, (a, kit) => {
    a.get('/statement', kit.requireRecentVerification({ scope: 'export', maxAge: TEN_MINUTES }), (_req, res) => {
      res.set('Cache-Control', 'private, max-age=60').send('statement');
    });
    // An app without helmet (the test app's is taken off), and one with a framing policy of its own.
    const withoutHelmet: express.RequestHandler = (_req, res, next) => {
      res.removeHeader('X-Frame-Options');
      res.removeHeader('Content-Security-Policy');
      next();
    };
    const codes = kit.requireRecentVerification({ scope: 'security', maxAge: TEN_MINUTES });
    a.get('/plain/codes', withoutHelmet, codes, (_req, res) => {
      res.send('plain codes');
    });
    a.get(
      '/framed-by-app/codes',
      withoutHelmet,
      (_req, res, next) => {
        res.setHeader('X-Frame-Options', 'DENY');
        next();
      },
      codes,
      (_req, res) => {
        res.send('own framing');
      },
    );
  });

  async function verifyFrom(user: Agent, html: string) {
    const form = confirmForm(html);
    const started = await user.start(form.action, { intent: form.intent });
    return user.request(await user.verifyOnHostedPage(started));
  }

  it('a guarded page opened with a fresh grant is sent no-store', async () => {
    const alice = await suite.app.agent().signIn('cache-page');
    await verifyFrom(alice, (await alice.request('/security')).body);
    const opened = await alice.request('/security');
    expect(opened.body).toContain('codes for cache-page');
    expect(opened.headers.get('cache-control')).toBe('no-store');
  });

  it('a kept form confirmed after the verification runs its handler, whose answer is sent no-store', async () => {
    const bob = await suite.app.agent().signIn('cache-form');
    const kept = await bob.request('/accounts/acct-9/payee', {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: bob.origin,
        'sec-fetch-site': 'same-origin',
      },
      body: 'iban=DE009',
    });
    const landing = await verifyFrom(bob, kept.body);
    const confirmPage = await bob.request(landing.location!);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(confirmPage.body)![1]!;
    const intent = /name="_verify_kit_intent" value="([^"]+)"/.exec(confirmPage.body)![1]!;
    const ran = await bob.request('/accounts/acct-9/payee', {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: bob.origin,
        'sec-fetch-site': 'same-origin',
      },
      body: new URLSearchParams({ _csrf: csrf, _verify_kit_intent: intent }).toString(),
    });
    expect(ran.body).toContain('payee saved');
    expect(ran.headers.get('cache-control')).toBe('no-store');
  });

  it('a guarded page of an app without a framing policy is sent X-Frame-Options: SAMEORIGIN; an app’s own policy stands', async () => {
    const dave = await suite.app.agent().signIn('frame-page');
    const asked = await dave.request('/plain/codes');
    expect(asked.headers.get('x-frame-options')).toBe('DENY'); // the kit's own page
    await verifyFrom(dave, asked.body);
    const opened = await dave.request('/plain/codes');
    expect(opened.body).toBe('plain codes');
    expect(opened.headers.get('x-frame-options')).toBe('SAMEORIGIN');
    const own = await dave.request('/framed-by-app/codes');
    expect(own.body).toBe('own framing');
    expect(own.headers.get('x-frame-options')).toBe('DENY');
  });

  it('a handler that sets its own Cache-Control keeps it', async () => {
    const carol = await suite.app.agent().signIn('cache-export');
    await verifyFrom(carol, (await carol.request('/statement')).body);
    const opened = await carol.request('/statement');
    expect(opened.status).toBe(200);
    expect(opened.headers.get('cache-control')).toBe('private, max-age=60');
  });
});
