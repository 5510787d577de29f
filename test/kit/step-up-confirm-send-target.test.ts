/**
 * The step-up page's 307 on to the path a kept form was kept at, that path read back from the
 * step-up store (a store of the app's own may answer anything), on SQLite and on PostgreSQL: a
 * path that is not a same-origin path (`//evil.example`, `/\evil.example`, a whole URL) is never
 * the 307's target. The confirmation fails closed, a 500 that sends nothing on and runs nothing,
 * as the landing checks a successPath before its 303.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { confirmForm, guardedRoutes, SCOPES, withStepUp, type Ran } from '../support/step-up.ts';

const OFF_SITE = ['//evil.example/payee', '/\\evil.example/payee', 'https://evil.example/payee', '/\t/evil.example'];

describeEachAppStore('step-up: the 307 to a kept path the store answers', (_store, storeOptions) => {
  let app: TestApp | undefined;
  const ran: Ran[] = [];
  /** The path the store answers for every kept form, once set; undefined answers the kept one. */
  let answeredPath: string | undefined;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: { scopes: [...SCOPES] },
      ownRoutes: guardedRoutes(ran),
      wrapStore: (store) =>
        withStepUp(store, (real) => ({
          findIntent: async (id) => {
            const intent = await real.findIntent(id);
            return intent === undefined || answeredPath === undefined ? intent : { ...intent, path: answeredPath };
          },
        })),
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it.each(OFF_SITE)('a kept path answered as %j is never the target of the 307: a 500, nothing run', async (path) => {
    answeredPath = undefined;
    const user = await app!.agent().signIn(`off-site-${OFF_SITE.indexOf(path)}`);
    const sameSite = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
    const kept = await user.postForm('/accounts/acc-1/payee', { iban: 'OFF-1' }, sameSite);
    const form = confirmForm(kept.body);
    const started = await user.start(form.action, { intent: form.intent });
    const landing = await user.request(await user.verifyOnHostedPage(started));
    expect(landing.location).toMatch(/^\/verify\/step-up\?intent=/);
    const page = await user.request(landing.location!);
    const fields = Object.fromEntries(
      [...page.body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]),
    );
    answeredPath = path;
    const sent = await user.postForm(landing.location!, fields, { ...sameSite, accept: 'text/html' });
    answeredPath = undefined;
    expect(sent.location).toBeNull();
    expect(sent.status).toBe(500);
    expect(sent.body).not.toContain('evil.example');
    expect(ran).toEqual([]);
  });

  it('a kept path answered with what a header cannot hold as it is (a space) is sent on encoded, never a 500', async () => {
    answeredPath = undefined;
    const user = await app!.agent().signIn('header-unsafe');
    const sameSite = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
    const kept = await user.postForm('/accounts/acc-2/payee', { iban: 'SP-1' }, sameSite);
    const form = confirmForm(kept.body);
    const started = await user.start(form.action, { intent: form.intent });
    const landing = await user.request(await user.verifyOnHostedPage(started));
    const page = await user.request(landing.location!);
    const fields = Object.fromEntries(
      [...page.body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]),
    );
    answeredPath = '/accounts/acc-2/payee?note=a b';
    const sent = await user.postForm(landing.location!, fields, { ...sameSite, accept: 'text/html' });
    answeredPath = undefined;
    expect(sent.status).toBe(307);
    expect(sent.location).toBe('/accounts/acc-2/payee?note=a%20b');
  });
});
