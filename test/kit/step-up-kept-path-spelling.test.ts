/**
 * A form kept at an address a browser sends with characters Express would re-encode in a redirect
 * (a `%` that starts no escape, `{` and `}` in the query), on SQLite and on PostgreSQL: the step-up
 * page's 307 sends the confirmation on to that address exactly as it was sent, so the guard finds
 * the form kept there and runs it once with its fields; it is never refused as kept elsewhere.
 */
import { expect, it } from 'vitest';
import type { Agent } from '../support/agent.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { confirmForm, TEN_MINUTES, useStepUpApp } from '../support/step-up.ts';

/** Query strings as a browser sends them (none of these characters is percent-encoded in a query). */
const QUERIES = ['?note=10%', '?tag={a}', '?range=`2024`&rate=5%off'];

describeEachAppStore('step-up: a kept form at an address Express would re-encode', (_store, storeOptions) => {
  const shared: { url: string; fields: Record<string, unknown> }[] = [];
  const suite = useStepUpApp(storeOptions, (own, kit) => {
    own.post(
      '/reports/:report/share',
      kit.requireRecentVerification({ scope: 'security', maxAge: TEN_MINUTES }),
      (req, res) => {
        shared.push({ url: req.originalUrl, fields: { ...(req.body as Record<string, unknown>) } });
        res.type('html').send('<!doctype html><title>Shared</title><h1 id="shared">report shared</h1>');
      },
    );
  });

  /** The confirmation page's form sent as a browser does: to the page's own address, then on through the 307. */
  async function confirm(user: Agent, pageAddress: string) {
    const page = await user.request(pageAddress);
    const fields = Object.fromEntries(
      [...page.body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]),
    );
    const asBrowser = { origin: user.origin, 'sec-fetch-site': 'same-origin', accept: 'text/html' };
    const sentOn = await user.postForm(pageAddress, fields, asBrowser);
    expect(sentOn.status).toBe(307);
    const answer = await user.postForm(sentOn.location!, fields, asBrowser);
    return { sentOn, answer, again: () => user.postForm(sentOn.location!, fields, asBrowser) };
  }

  it.each(QUERIES)('a form kept at /reports/r1/share%s is confirmed there and runs once', async (query) => {
    const user = await suite.app.agent().signIn(`spelling-${QUERIES.indexOf(query)}`);
    const address = `/reports/r1/share${query}`;
    const kept = await user.postForm(address, { to: 'team' }, { origin: user.origin, 'sec-fetch-site': 'same-origin' });
    const form = confirmForm(kept.body);
    const started = await user.start(form.action, { intent: form.intent });
    const landing = await user.request(await user.verifyOnHostedPage(started));
    expect(landing.location).toMatch(/^\/verify\/step-up\?intent=/);
    const before = shared.length;
    const { sentOn, answer, again } = await confirm(user, landing.location!);
    expect(answer.status).toBe(200);
    expect(answer.body).toContain('report shared');
    expect(shared.slice(before)).toEqual([{ url: address, fields: { to: 'team' } }]);
    expect(sentOn.location).toBe(address);
    // Sent again (a reload of the address it was sent on to), it runs nothing more.
    expect((await again()).status).toBe(409);
    expect(shared).toHaveLength(before + 1);
  });
});
