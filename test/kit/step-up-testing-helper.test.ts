/**
 * `verifyStepUp` from `hosted-sms-verify-kit/testing`: one call gives a test browser a grant through
 * the real flow (the kit's page, its start, the hosted page with the texted code, the landing), and
 * follows the user back to the guarded page or to the confirmation of a kept form. On SQLite and
 * on PostgreSQL.
 */
import { expect, it } from 'vitest';
import { createTestBrowser, verifyStepUp } from '../../testing/testing.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { useStepUpApp } from '../support/step-up.ts';

describeEachAppStore('verifyStepUp', (_store, storeOptions) => {
  const suite = useStepUpApp(storeOptions);
  const { ran } = suite;

  async function signedIn(name: string) {
    const browser = createTestBrowser();
    const answer = await browser.post(`${suite.app.url}/test/login`, { user: name }, suite.app.url);
    expect(answer.status).toBe(200);
    return browser;
  }

  it('a guarded page: one call verifies and returns the opened page', async () => {
    const browser = await signedIn('alice');
    const result = await verifyStepUp(`${suite.app.url}/security?tab=codes`, { browser, emulator: suite.app.emulator });
    expect(result.returnedTo).toBe(`${suite.app.url}/security?tab=codes`);
    expect(result.page.status).toBe(200);
    expect(result.page.html).toContain('codes for alice');
    expect((await suite.app.kit.grants.list({ userRef: 'user-alice' })).map((g) => g.sessionId)).toContain(
      result.sessionId,
    );
  });

  it('a kept form: it returns the confirmation page, whose form then runs the handler once', async () => {
    const browser = await signedIn('bob');
    const kept = await browser.post(
      `${suite.app.url}/accounts/acct-3/payee`,
      { iban: 'BE68539' },
      `${suite.app.url}/payee`,
    );
    const result = await verifyStepUp(kept, { browser, emulator: suite.app.emulator });
    expect(result.returnedTo).toMatch(/\/verify\/step-up\?intent=/);
    expect(ran.filter((r) => r.route === 'payee')).toEqual([]);
    const done = await browser.submitForm(result.page);
    expect(done.html).toContain('payee saved');
    expect(ran.filter((r) => r.route === 'payee')).toEqual([
      { route: 'payee', user: 'bob', fields: { iban: 'BE68539' } },
    ]);
  });

  it('rejects a page that is not the kit’s "Confirm it’s you" page, saying so', async () => {
    const browser = await signedIn('carol');
    await expect(verifyStepUp(`${suite.app.url}/done`, { browser, emulator: suite.app.emulator })).rejects.toThrow(
      /not the kit’s "Confirm it’s you" page/,
    );
  });
});
