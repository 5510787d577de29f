/**
 * The step-up guard's checks that only a hostile request reaches, on SQLite and on PostgreSQL: each
 * case sends what an attacker (or a confused client) would and proves the check that refuses it.
 * A kept form runs only for its own resource, route, method, user and browser session, once; another
 * site's form or JSON is refused even when its Origin is sent; a consumed or foreign intent opens no
 * confirmation page and sends no text; revoking one scope leaves the others; a form too large to keep
 * is refused; a grant is fresh up to exactly maxAge and not a millisecond longer.
 */
import express from 'express';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Agent } from '../support/agent.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { confirmForm, methodOverride, TEN_MINUTES, useStepUpApp } from '../support/step-up.ts';
import { demoKitMessages } from '../../demo-app/i18n.ts';

/** The hidden fields of the kit's confirmation page (GET /verify/step-up?intent=...). */
function confirmationFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [, name, value] of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) {
    fields[name!] = value!;
  }
  if (fields._verify_kit_intent === undefined) throw new Error(`no confirmation form in ${html.slice(0, 400)}`);
  return fields;
}

describeEachAppStore('step-up against hostile requests', (_store, storeOptions) => {
  const suite = useStepUpApp(storeOptions);
  const { ran } = suite;
  const runsOf = (user: string) => ran.filter((r) => r.user === user);
  const smsCount = async () => (await suite.app.emulator.control.outbox()).length;
  const sameSite = (agent: Agent) => ({ origin: agent.origin, 'sec-fetch-site': 'same-origin' });
  const intentRows = async (userRef: string) =>
    Number(
      (
        await suite.app.query<{ n: number | string }>(
          'SELECT count(*) AS n FROM verify_kit_intents WHERE user_ref = $1',
          [userRef],
        )
      )[0]!.n,
    );

  /** Verifies from a "Confirm it's you" page and follows the landing; returns where it sent the user. */
  async function verifyFrom(user: Agent, html: string): Promise<string> {
    const form = confirmForm(html);
    const started = await user.start(form.action, { intent: form.intent });
    const landing = await user.request(await user.verifyOnHostedPage(started));
    expect(landing.status).toBe(303);
    return landing.location!;
  }

  /** Keeps a payee form for `account`, verifies it and returns the confirmation page's fields (not yet sent). */
  async function keptAndVerified(user: Agent, account: string, iban: string): Promise<Record<string, string>> {
    const kept = await user.postForm(`/accounts/${account}/payee`, { iban }, sameSite(user));
    expect(kept.body).toContain('Confirm it’s you');
    const confirmation = await user.request(await verifyFrom(user, kept.body));
    expect(confirmation.status).toBe(200);
    return confirmationFields(confirmation.body);
  }

  it('a kept form never runs under a grant for another resource: the grant for account 1 does not carry account 2’s form', async () => {
    const alice = await suite.app.agent().signIn('hostile-key');
    // A form for acct-2 is kept and never verified; acct-1 gets a fresh grant.
    const forAcct2 = confirmForm(
      (await alice.postForm('/accounts/acct-2/payee', { iban: 'TWO' }, sameSite(alice))).body,
    );
    await keptAndVerified(alice, 'acct-1', 'ONE');
    const sent = await alice.postForm(
      '/accounts/acct-2/payee',
      { _csrf: alice.csrf, _verify_kit_intent: forAcct2.intent },
      sameSite(alice),
    );
    expect(sent.body).toContain('Confirm it’s you');
    expect(runsOf('hostile-key').filter((r) => r.fields.iban === 'TWO')).toEqual([]);
  });

  it('another site’s form or JSON is refused even when it sends its own Origin: nothing is kept or texted', async () => {
    const bob = await suite.app.agent().signIn('hostile-origin');
    const texts = await smsCount();
    const fromForm = await bob.postForm('/accounts/acct-1/payee', { iban: 'EVIL' }, { origin: 'https://evil.example' });
    expect(fromForm.status).toBe(403);
    const fromScript = await bob.request('/accounts/acct-1/payee', {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'https://evil.example', accept: 'application/json' },
      body: JSON.stringify({ iban: 'EVIL' }),
    });
    expect(fromScript.status).toBe(403);
    expect(await intentRows('user-hostile-origin')).toBe(0);
    expect(await smsCount()).toBe(texts);
  });

  it('a confirmed intent runs only at the path it was kept for: another query on the same route is refused', async () => {
    const carol = await suite.app.agent().signIn('hostile-path');
    const fields = await keptAndVerified(carol, 'acct-7', 'SEVEN');
    const elsewhere = await carol.postForm('/accounts/acct-7/payee?via=elsewhere', fields, sameSite(carol));
    expect(elsewhere.status).toBe(409);
    expect(runsOf('hostile-path')).toEqual([]);
    // At its own path it still runs, once.
    expect((await carol.postForm('/accounts/acct-7/payee', fields, sameSite(carol))).body).toContain('payee saved');
    expect(runsOf('hostile-path')).toEqual([{ route: 'payee', user: 'hostile-path', fields: { iban: 'SEVEN' } }]);
  });

  it('another user, or the same user in another browser session, can neither open nor send someone’s confirmed intent', async () => {
    const alice = await suite.app.agent().signIn('hostile-owner');
    const fields = await keptAndVerified(alice, 'acct-9', 'ALICE-NINE');
    const intentId = fields._verify_kit_intent!;
    for (const name of ['hostile-intruder', 'hostile-owner']) {
      const other = await suite.app.agent().signIn(name);
      // Each holds a fresh grant of its own for the same scope and resource.
      await keptAndVerified(other, 'acct-9', `OWN-${name}`);
      const page = await other.request(`/verify/step-up?intent=${encodeURIComponent(intentId)}`);
      expect(page.status).toBe(409);
      expect(page.body).not.toContain(intentId);
      const sent = await other.postForm(
        '/accounts/acct-9/payee',
        { _csrf: other.csrf, _verify_kit_intent: intentId },
        sameSite(other),
      );
      expect(sent.status).toBe(409);
    }
    expect(ran.filter((r) => r.fields.iban === 'ALICE-NINE')).toEqual([]);
  });

  it('a consumed intent, or one from another browser session, opens no confirmation page and sends no text', async () => {
    const dana = await suite.app.agent().signIn('hostile-consumed');
    const fields = await keptAndVerified(dana, 'acct-3', 'DANA-THREE');
    expect((await dana.postForm('/accounts/acct-3/payee', fields, sameSite(dana))).body).toContain('payee saved');
    const consumed = fields._verify_kit_intent!;
    const texts = await smsCount();
    expect((await dana.request(`/verify/step-up?intent=${encodeURIComponent(consumed)}`)).status).toBe(409);
    expect((await dana.tryStart('payout', { intent: consumed })).status).toBe(409);

    const pending = confirmForm(
      (await dana.postForm('/accounts/acct-4/payee', { iban: 'DANA-FOUR' }, sameSite(dana))).body,
    ).intent;
    const danaElsewhere = await suite.app.agent().signIn('hostile-consumed');
    expect((await danaElsewhere.tryStart('payout', { intent: pending })).status).toBe(409);
    expect(await smsCount()).toBe(texts);
    expect(runsOf('hostile-consumed').map((r) => r.fields.iban)).toEqual(['DANA-THREE']);
  });

  it('revoking one scope leaves the user’s grants of the other scopes', async () => {
    const erin = await suite.app.agent().signIn('hostile-revoke');
    await verifyFrom(erin, (await erin.request('/security')).body);
    await verifyFrom(erin, (await erin.request('/export')).body);
    expect(await suite.app.kit.grants.revoke({ userRef: 'user-hostile-revoke', scope: 'security' })).toBe(1);
    expect((await erin.request('/security')).body).toContain('Confirm it’s you');
    expect((await erin.request('/export', { headers: { accept: 'application/json' } })).status).toBe(200);
    expect((await suite.app.kit.grants.list({ userRef: 'user-hostile-revoke' })).map((g) => g.scope)).toEqual([
      'export',
    ]);
  });

  it('a form larger than 64 KB is refused with 400 and nothing is kept', async () => {
    const frank = await suite.app.agent().signIn('hostile-large');
    const large = await frank.postForm('/accounts/acct-1/payee', { iban: 'x'.repeat(66 * 1024) }, sameSite(frank));
    expect(large.status).toBe(400);
    expect(large.body).not.toContain('Confirm it’s you');
    expect(await intentRows('user-hostile-large')).toBe(0);
  });

  it('a resource key holding a NUL byte (bindTo reads `%00` from the path; PostgreSQL cannot keep it) is a 400 that keeps and sends nothing, on every store', async () => {
    const ivy = await suite.app.agent().signIn('hostile-nul-resource');
    const sent = await smsCount();
    const answer = await ivy.postForm('/accounts/a%00b/payee', { iban: 'NUL' }, sameSite(ivy));
    expect(answer.status).toBe(400);
    expect(answer.body).not.toContain('Confirm it’s you');
    expect(await intentRows('user-hostile-nul-resource')).toBe(0);
    expect(await smsCount()).toBe(sent);
    expect(runsOf('hostile-nul-resource')).toEqual([]);
  });

  it('a grant is fresh up to exactly maxAge after its attempt started, and not a millisecond longer', async () => {
    const grace = await suite.app.agent().signIn('hostile-fresh');
    await verifyFrom(grace, (await grace.request('/security')).body);
    const [grant] = await suite.app.kit.grants.list({ userRef: 'user-hostile-fresh', scope: 'security' });
    const at = (ms: number) => suite.app.clock.pinned(grant!.startedAt + ms, () => grace.request('/security'));
    expect((await at(TEN_MINUTES * 1000)).body).toContain('codes for hostile-fresh');
    expect((await at(TEN_MINUTES * 1000 + 1)).body).toContain('Confirm it’s you');
  });
});

describeEachAppStore('step-up: a kept method is the method that runs', (_store, storeOptions) => {
  let app: TestApp | undefined;
  const ran: string[] = [];
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: { scopes: [{ name: 'payout', operationSensitivity: 'sensitive', label: 'change the payout account' }] },
      ownRoutes: (a, kit) => {
        a.use('/items', express.urlencoded({ extended: false }), methodOverride);
        const guard = kit.requireRecentVerification({ scope: 'payout', maxAge: 300 });
        a.delete('/items/:id', guard, (req, res) => {
          ran.push(`DELETE ${req.params.id}`);
          res.type('html').send('<h1>deleted</h1>');
        });
        a.post('/items/:id', guard, (req, res) => {
          ran.push(`POST ${req.params.id} ${JSON.stringify(req.body)}`);
          res.type('html').send('<h1>posted</h1>');
        });
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('a kept DELETE, confirmed as a plain POST to the same path, is refused and runs nothing', async () => {
    const alice = await app!.agent().signIn('alice');
    const headers = { origin: alice.origin, 'sec-fetch-site': 'same-origin' };
    const kept = await alice.postForm('/items/5', { _method: 'DELETE' }, headers);
    const form = confirmForm(kept.body);
    const started = await alice.start(form.action, { intent: form.intent });
    const landing = await alice.request(await alice.verifyOnHostedPage(started));
    const fields = confirmationFields((await alice.request(landing.location!)).body);
    // The confirmation page's own `_method` left out: the request arrives as a POST.
    const { _method: _kept, ...withoutOverride } = fields;
    const asPost = await alice.postForm('/items/5', withoutOverride, headers);
    expect(asPost.status).toBe(409);
    expect(ran).toEqual([]);
    expect((await alice.postForm('/items/5', fields, headers)).body).toContain('deleted');
    expect(ran).toEqual(['DELETE 5']);
  });
});

describeEachAppStore('step-up: a kept form runs only for the resource it was kept for', (_store, storeOptions) => {
  let app: TestApp | undefined;
  const ran: string[] = [];
  const workspaceOf = (req: express.Request) => (req.session as { workspace?: string }).workspace;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: {
        scopes: [{ name: 'payout', operationSensitivity: 'sensitive', label: 'change the payout account' }],
        messages: { fr: demoKitMessages.fr },
      },
      ownRoutes: (a, kit) => {
        // The workspace the user switched to: one path for every workspace, the resource in the session.
        a.post('/workspace', express.urlencoded({ extended: false }), (req, res) => {
          (req.session as { workspace?: string }).workspace = String((req.body as { workspace?: string }).workspace);
          res.json({ ok: true });
        });
        a.post(
          '/payee',
          express.urlencoded({ extended: false }),
          kit.requireRecentVerification({ scope: 'payout', maxAge: 300, bindTo: workspaceOf }),
          (req, res) => {
            ran.push(`${workspaceOf(req)} ${JSON.stringify(req.body)}`);
            res.type('html').send('<h1>payee saved</h1>');
          },
        );
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('a kept form sent back after the user switched to another resource is refused (409) and kept for none but its own, as one sent to another path is', async () => {
    const alice = await app!.agent().signIn('alice');
    const headers = { origin: alice.origin, 'sec-fetch-site': 'same-origin' };
    const switchTo = (workspace: string) => alice.postForm('/workspace', { workspace }, headers);
    /** Keeps a payee form in the current workspace and verifies it; the confirmation page's fields. */
    const keptAndVerified = async (iban: string) => {
      const form = confirmForm((await alice.postForm('/payee', { iban }, headers)).body);
      const started = await alice.start(form.action, { intent: form.intent });
      const landing = await alice.request(await alice.verifyOnHostedPage(started));
      return confirmationFields((await alice.request(landing.location!)).body);
    };
    await switchTo('alpha');
    const alphaForm = await keptAndVerified('ALPHA-IBAN');
    await switchTo('beta');
    await keptAndVerified('BETA-IBAN'); // a fresh grant for beta, its form left unconfirmed
    const intents = async () =>
      Number((await app!.query<{ n: number | string }>('SELECT count(*) AS n FROM verify_kit_intents'))[0]!.n);
    const keptBefore = await intents();
    const texts = (await app!.emulator.control.outbox()).length;
    // Kept for beta, it would run alpha's payee in beta after one more code: the user never sent it there.
    const inBeta = await alice.postForm('/payee', alphaForm, headers);
    expect(inBeta.status).toBe(409);
    // Still kept for alpha: the page says where it can be confirmed, not that nothing is left to do.
    expect(inBeta.body).toContain('<h1>Confirm your request</h1>');
    expect(inBeta.body).toContain(
      'This request was made for another account or workspace than the one open now. Switch back to that one to confirm it. Nothing was changed.',
    );
    expect(inBeta.body).not.toMatch(/already carried out|no longer open|bindTo|resource|beta|alpha/i);
    const french = await alice.postForm('/payee', alphaForm, { ...headers, 'accept-language': 'fr' });
    expect(french.status).toBe(409);
    expect(french.body).toContain(
      'Cette demande a été faite pour un autre compte ou espace de travail que celui ouvert maintenant. Revenez-y ' +
        'pour la confirmer. Rien n’a été modifié.',
    );
    expect(await intents()).toBe(keptBefore);
    expect((await app!.emulator.control.outbox()).length).toBe(texts);
    expect(ran).toEqual([]);
    // Back in its own workspace, the kept form still runs, once.
    await switchTo('alpha');
    expect((await alice.postForm('/payee', alphaForm, headers)).body).toContain('payee saved');
    expect(ran).toEqual(['alpha {"iban":"ALPHA-IBAN"}']);
  });
});
