/**
 * A guarded path that holds a phone number, on SQLite and on PostgreSQL: the kit's pages that lead
 * back to it (the confirmation of a kept form, the page another site linked to) never repeat the
 * number in their source, in any encoding, nor does the confirmation's 307 on to the kept path
 * outside its Location (the app's own address), and still lead there: the form confirmed runs once
 * with its kept fields, the link opens the page from this site.
 */
import { expect, it } from 'vitest';
import type { Agent } from '../support/agent.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { confirmForm, TEN_MINUTES, useStepUpApp } from '../support/step-up.ts';

const NUMBER = '+447400123456';

/** Fails when the page's source holds the number: as typed, percent-encoded, or its national digits. */
function expectNumberNotIn(html: string): void {
  const decoded = html.replace(/%([0-9a-f]{2})/gi, (_all, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  for (const source of [html, decoded]) {
    expect(source).not.toContain('7400123456');
    expect(source).not.toContain('+44');
  }
}

/** Where a page's `action` or `href` leads: empty or absent, the page's own address with its query. */
function resolved(reference: string | undefined, pageAddress: string): string {
  const url = new URL((reference ?? '').replaceAll('&amp;', '&'), new URL(pageAddress, 'http://site.test'));
  return `${url.pathname}${url.search}`;
}

/** Every hidden field of a page's one form. */
function hiddenFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [, name, value] of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields[name!] = value!;
  }
  return fields;
}

describeEachAppStore('step-up: a phone number in the guarded path', (_store, storeOptions) => {
  const suite = useStepUpApp(storeOptions, (own, kit) => {
    own.get(
      '/numbers/:number',
      kit.requireRecentVerification({ scope: 'security', maxAge: TEN_MINUTES }),
      (_req, res) => {
        res.type('html').send('<!doctype html><title>Number</title><h1 id="number">number settings</h1>');
      },
    );
  });

  /**
   * Sends the confirmation page's form as a browser does (asking for HTML): to its action, following
   * a 307 with the same body; a 307's own body never holds the number.
   */
  async function submitConfirmation(user: Agent, pageAddress: string, html: string) {
    const action = /<form method="post"(?: action="([^"]*)")?>/.exec(html);
    expect(action).not.toBeNull();
    const body = new URLSearchParams(hiddenFields(html)).toString();
    const asBrowser = { origin: user.origin, 'sec-fetch-site': 'same-origin', accept: 'text/html' };
    let answer = await user.postForm(resolved(action![1], pageAddress), body, asBrowser);
    for (let hops = 0; hops < 3 && (answer.status === 307 || answer.status === 308); hops++) {
      expectNumberNotIn(answer.body);
      answer = await user.postForm(answer.location!, body, asBrowser);
    }
    return answer;
  }

  it('the confirmation of a form kept at a path with a number holds no number, and confirming it runs the form once', async () => {
    const user = await suite.app.agent().signIn('number-path');
    const sameSite = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
    const kept = await user.postForm(`/accounts/${NUMBER}/payee`, { iban: 'NUM-1' }, sameSite);
    const form = confirmForm(kept.body);
    const started = await user.start(form.action, { intent: form.intent });
    const landing = await user.request(await user.verifyOnHostedPage(started));
    expect(landing.location).toMatch(/^\/verify\/step-up\?intent=/);
    const confirm = await user.request(landing.location!);
    expect(confirm.status).toBe(200);
    expectNumberNotIn(confirm.body);
    const confirmed = await submitConfirmation(user, landing.location!, confirm.body);
    expect(confirmed.body).toContain('payee saved');
    expect(suite.ran.filter((r) => r.user === 'number-path')).toEqual([
      { route: 'payee', user: 'number-path', fields: { iban: 'NUM-1' } },
    ]);
    // Sent again (a reload, the back button), it runs nothing more.
    expect((await submitConfirmation(user, landing.location!, confirm.body)).status).toBe(409);
    expect(suite.ran.filter((r) => r.user === 'number-path')).toHaveLength(1);
  });

  it('the page for a link from another site to a path with a number holds no number, and its link opens that page from this site', async () => {
    const user = await suite.app.agent().signIn('number-link');
    const address = `/numbers/${encodeURIComponent(NUMBER)}?tab=calls`;
    const linked = await user.request(address, {
      headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' },
    });
    expect(linked.status).toBe(200);
    expectNumberNotIn(linked.body);
    const href = /<a href="([^"]*)">Continue<\/a>/.exec(linked.body);
    expect(href).not.toBeNull();
    expect(resolved(href![1], address)).toBe(address);
    const own = await user.request(resolved(href![1], address), { headers: { 'sec-fetch-site': 'same-origin' } });
    expect(own.body).toContain('Confirm it’s you');
    expect(own.body).toContain('name="intent"');
  });
});
