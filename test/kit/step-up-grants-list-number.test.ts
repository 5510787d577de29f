/**
 * kit.grants.list as a support screen shows it, on SQLite and on PostgreSQL: a grant bound to a
 * resource that is a phone number (a guard on /phones/:number) lists that number masked ("•• 23"),
 * as the outcome event of its verification does: a full number appears only where the user typed
 * it, and the operator reading the screen did not. Other keys, and a long key's digest, are listed
 * as bound.
 */
import { expect, it } from 'vitest';
import { createGrantReader } from '../../middleware/step-up/grants.ts';
import type { StepUpStore } from '../../middleware/store/types.ts';
import type { Agent } from '../support/agent.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { confirmForm, TEN_MINUTES, useStepUpApp } from '../support/step-up.ts';

describeEachAppStore('step-up: kit.grants.list and a resource that is a phone number', (_store, storeOptions) => {
  const suite = useStepUpApp(storeOptions, (own, kit) => {
    own.get(
      '/phones/:number',
      kit.requireRecentVerification({
        scope: 'security',
        maxAge: TEN_MINUTES,
        bindTo: (req) => String(req.params.number),
      }),
      (_req, res) => {
        res.type('html').send('<!doctype html><title>Phone</title><h1>phone</h1>');
      },
    );
  });

  /** Opens the page, verifies from its "Confirm it's you" page and lands. */
  async function grantFor(user: Agent, path: string): Promise<void> {
    const form = confirmForm((await user.request(path)).body);
    const started = await user.start(form.action, { intent: form.intent });
    expect((await user.request(await user.verifyOnHostedPage(started))).location).toBe(path);
  }

  it('lists a resource key that may be a phone number masked; an id and a long key’s digest as bound', async () => {
    const user = await suite.app.agent().signIn('support-screen');
    const longKey = `ref-${'7'.repeat(300)}`;
    for (const key of ['+447700900123', '07700%20900%20456', 'acct-1', longKey]) await grantFor(user, `/phones/${key}`);
    const listed = (await suite.app.kit.grants.list({ userRef: 'user-support-screen' })).map((g) => g.resourceKey);
    expect(listed).toHaveLength(4);
    expect(listed.join(' ')).not.toMatch(/7700\s*900/);
    expect(listed).toEqual(expect.arrayContaining(['••\u00a023', '••\u00a056', 'acct-1']));
    expect(listed.filter((key) => /^sha256:[\w-]{43}$/.test(key))).toHaveLength(1);
  });
});

it('lists a key a store of the app’s own answers as something other than text (null for none) as it is, never a TypeError', async () => {
  const grant = {
    sessionId: 's',
    userRef: 'u',
    scope: 'security',
    resourceKey: null,
    browserSession: 'b',
    startedAt: 1,
    grantedAt: 2,
  };
  const store = { listGrants: () => Promise.resolve([grant]) } as unknown as StepUpStore;
  const reader = createGrantReader(store, () => 0, new Map(), { timeoutMs: 1_000, onLateRejection: () => {} });
  expect((await reader.list({ userRef: 'u' })).map((listed) => listed.resourceKey)).toEqual([null]);
});
