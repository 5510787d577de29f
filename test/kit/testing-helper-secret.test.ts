/**
 * The testing helpers quote the page they failed on in their error (`verifyStepUp` here; the
 * hosted-page walk and the entered-number helper use the same excerpt): that quote never carries
 * the client secret of a kit in the process, in any spelling. A page of the app that shows it (a
 * debug footer printing the configuration, what the audit's leak.secret looks for) would otherwise
 * put it into the CI log of the integrator's test. On SQLite.
 */
import { describe, expect, it } from 'vitest';
import { createTestBrowser, verifyStepUp } from '../../testing/testing.ts';
import { useStepUpApp } from '../support/step-up.ts';

describe('verifyStepUp: the page it quotes (SQLite)', () => {
  const storeOptions = async () => ({});
  let secret = '';
  const suite = useStepUpApp(storeOptions, (app) => {
    // An app's debug footer: what it was configured with.
    app.get('/settings', (_req, res) => {
      res.send(`<!doctype html><title>Settings</title><p>Debug: client secret ${secret}</p>`);
    });
  });

  it('does not carry the client secret when the page shows it', async () => {
    secret = suite.app.secret;
    const browser = createTestBrowser();
    expect((await browser.post(`${suite.app.url}/test/login`, { user: 'dora' }, suite.app.url)).status).toBe(200);
    const error = await verifyStepUp(`${suite.app.url}/settings`, { browser, emulator: suite.app.emulator }).then(
      () => undefined,
      (thrown: unknown) => thrown as Error,
    );
    expect(error?.message).toMatch(/not the kit’s "Confirm it’s you" page/);
    // Not even a part of it: the numbers masked in it leave its letters between them.
    const random = secret.slice('kit-secret-'.length);
    const parts = Array.from({ length: random.length - 5 }, (_, at) => random.slice(at, at + 6));
    expect(parts.filter((part) => error?.message.includes(part))).toEqual([]);
  });
});
