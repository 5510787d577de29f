/**
 * Step-up for the integrator's own routes (kit.requireRecentVerification), over real HTTP against
 * the emulator, on SQLite and on PostgreSQL: a GET never texts and returns to the exact guarded
 * path; a grant is bound to its scope, its resource, the browser session and its age (counted from
 * the attempt's start); a user refused within 2 minutes of a grant is told why (too old, or for
 * something else); a kept form (a method override's too) runs once, only after its
 * confirmation, only from this site's pages and with its confirm page's CSRF token; JSON, or any request that is not a navigation,
 * gets 401; a user without a number is refused; nothing chooses a URL from a parameter; the log
 * names the guarded path, never its query.
 */
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KitErrorCode } from '../../middleware/errors.ts';
import { runSweepJob } from '../../middleware/sweep/sweep-job.ts';
import { LIVE_INTENTS_PER_USER } from '../../middleware/step-up/intent-limit.ts';
import { INTENT_TTL_MS } from '../../middleware/step-up/scope-actions.ts';
import type { Agent } from '../support/agent.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { userNamed, USERS } from '../support/users.ts';
import { confirmForm, methodOverride, TEN_MINUTES, useStepUpApp } from '../support/step-up.ts';

describeEachAppStore('step-up', (_store, storeOptions) => {
  const suite = useStepUpApp(storeOptions);
  const { ran } = suite;

  const smsCount = async () => (await suite.app.emulator.control.outbox()).length;
  const payeeRuns = () => ran.filter((r) => r.route === 'payee').length;

  /** Presses "Text me a code" on a confirm page, enters the code, lands; returns the landing's answer. */
  async function verifyFrom(user: Agent, html: string) {
    const form = confirmForm(html);
    const started = await user.start(form.action, { intent: form.intent });
    const location = await user.verifyOnHostedPage(started);
    return { landing: await user.request(location), started };
  }

  /** Rows of kept intents whose stored fields hold `text`. */
  async function intentsHolding(text: string): Promise<number> {
    const rows = await suite.app.query<{ fields: unknown }>('SELECT fields FROM verify_kit_intents');
    return rows.filter((row) => JSON.stringify(row.fields).includes(text)).length;
  }

  it('names the number the code goes to as it is texted: a stored number with an extension shows its own last digits, not the extension’s', async () => {
    USERS.extension = { userRef: 'user-extension', destination: '+1 555 000 3344 ext. 99' };
    try {
      const user = await suite.app.agent().signIn('extension');
      const page = await user.request('/security?tab=codes');
      expect(page.body).toContain('your number ••\u00a044,');
    } finally {
      delete USERS.extension;
    }
  });

  it('a GET without a grant answers "Confirm it’s you" and sends no text; the user returns to the exact path and query', async () => {
    const alice = await suite.app.agent().signIn('alice');
    const texts = await smsCount();
    const first = await alice.request('/security?tab=codes&next=https%3A%2F%2Fevil.example%2F', {
      headers: { referer: 'https://evil.example/phish' },
    });
    expect(first.status).toBe(200);
    expect(first.headers.get('cache-control')).toBe('no-store');
    expect(first.body).toContain('Confirm it’s you');
    expect(first.body).toContain('your number ••\u00a011,');
    expect(first.body).toContain('You asked to: see your recovery codes.');
    expect(ran.filter((r) => r.route === 'security')).toEqual([]);
    expect(await smsCount()).toBe(texts); // GET must stay safe: nothing sent

    const { landing } = await verifyFrom(alice, first.body);
    expect(landing.status).toBe(303);
    // The kept path and query, as received: never the `next` parameter or the Referer.
    expect(landing.location).toBe('/security?tab=codes&next=https%3A%2F%2Fevil.example%2F');
    const opened = await alice.request(landing.location!);
    expect(opened.status).toBe(200);
    expect(opened.body).toContain('codes for alice');
    // The guard logs the route it guarded, never its query: a query may carry the app's own tokens.
    expect(suite.app.logs.join('\n')).toContain('"routePattern":"/security"');
    expect(suite.app.logs.join('\n')).not.toContain('evil.example');
  });

  it('a page asked again and again keeps one intent, its lifetime renewed, instead of a row per request', async () => {
    const bob = await suite.app.agent().signIn('bob');
    const path = '/security?tab=keys';
    const intentOf = async (shiftMs: number) =>
      confirmForm((await suite.app.clock.shifted(shiftMs, () => bob.request(path))).body).intent;
    const first = await intentOf(0);
    for (let i = 0; i < 4; i++) expect(await intentOf(0)).toBe(first);
    const rows = () =>
      suite.app.query<{ n: number | string }>(
        'SELECT count(*) AS n FROM verify_kit_intents WHERE user_ref = $1 AND path = $2',
        [USERS.bob!.userRef, path],
      );
    expect(Number((await rows())[0]!.n)).toBe(1);
    // Asked again 10 minutes later, then 24 minutes after the first: the one intent, renewed for 15 minutes each time.
    expect(await intentOf(10 * 60_000)).toBe(first);
    expect(await intentOf(24 * 60_000)).toBe(first);
    // Another path, or the page once its intent expired, gets a new one.
    expect(confirmForm((await bob.request('/security?tab=other')).body).intent).not.toBe(first);
    expect(await intentOf(40 * 60_000)).not.toBe(first);
    // A kept page leads back to its own path only.
    const { landing } = await verifyFrom(bob, (await bob.request(path)).body);
    expect(landing.location).toBe(path);
  });

  it('a grant opens only its own scope, and only in the browser session it was made in', async () => {
    const alice = await suite.app.agent().signIn('alice');
    const page = await alice.request('/security');
    await verifyFrom(alice, page.body);
    expect((await alice.request('/security')).status).toBe(200);
    expect((await alice.request('/security')).body).toContain('codes for alice');
    // Another scope needs its own verification.
    const other = await alice.request('/export');
    expect(other.body).toContain('Confirm it’s you');
    // The same user in another browser session has no grant.
    const aliceElsewhere = await suite.app.agent().signIn('alice');
    expect((await aliceElsewhere.request('/security')).body).toContain('Confirm it’s you');
  });

  it('expiry is absolute, counted from the attempt’s start: past maxAge the guard asks again', async () => {
    const alice = await suite.app.agent().signIn('alice');
    const page = await alice.request('/security');
    await verifyFrom(alice, page.body);
    expect((await alice.request('/security')).body).toContain('codes for alice');
    const later = (seconds: number) => suite.app.clock.shifted(seconds * 1000, () => alice.request('/security'));
    expect((await later(TEN_MINUTES - 5)).body).toContain('codes for alice');
    // Expiry is absolute: the use above did not renew it.
    expect((await later(TEN_MINUTES + 5)).body).toContain('Confirm it’s you');
    expect(suite.app.logs.some((l) => l.includes('"event":"expired"') && l.includes('"scope":"security"'))).toBe(true);
  });

  it('a user who comes back verified but too late for maxAge gets an explanation, not another round trip', async () => {
    const alice = await suite.app.agent().signIn('alice');
    const page = await alice.request('/accounts/acct-1/payee', {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: alice.origin,
        'sec-fetch-site': 'same-origin',
      },
      body: 'iban=DE001',
    });
    const form = confirmForm(page.body);
    const started = await alice.start(form.action, { intent: form.intent });
    // The code took longer than the payout guard's 300 s.
    const submitted = await suite.app.clock.shifted(301_000, async () => {
      const location = await alice.verifyOnHostedPage(started);
      const landing = await alice.request(location);
      const confirm = await alice.request(landing.location!);
      const intentField = /name="(_verify_kit_intent)" value="([^"]+)"/.exec(confirm.body)!;
      return alice.postForm(
        '/accounts/acct-1/payee',
        { _csrf: alice.csrf, [intentField[1]!]: intentField[2]! },
        { origin: alice.origin, 'sec-fetch-site': 'same-origin' },
      );
    });
    expect(submitted.status).toBe(403);
    expect(submitted.body).toContain('took longer than this page allows');
    expect(payeeRuns()).toBe(0);
  });

  it('a kept form confirmed too late is kept anew and asked again, and only the new one runs: the first confirmation page then runs nothing (409)', async () => {
    const user = await suite.app.agent().signIn('confirmed-too-late');
    const sameSite = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
    const mine = () => ran.filter((r) => r.user === 'confirmed-too-late').length;
    const kept = await user.postForm('/accounts/acct-late/payee', { iban: 'LATE-1' }, sameSite);
    const started = await user.start(confirmForm(kept.body).action, { intent: confirmForm(kept.body).intent });
    // Past the payout guard's 300 s, and within the kept form's 15 minutes.
    await suite.app.clock.shifted(301_000, async () => {
      const confirm = await user.request((await user.request(await user.verifyOnHostedPage(started))).location!);
      const first = /name="_verify_kit_intent" value="([^"]+)"/.exec(confirm.body)![1]!;
      const confirmFirst = () =>
        user.postForm('/accounts/acct-late/payee', { _csrf: user.csrf, _verify_kit_intent: first }, sameSite);
      const askedAgain = await confirmFirst();
      expect(askedAgain.status).toBe(403);
      const { landing } = await verifyFrom(user, askedAgain.body);
      const second = /name="_verify_kit_intent" value="([^"]+)"/.exec(
        (await user.request(landing.location!)).body,
      )![1]!;
      expect(second).not.toBe(first);
      const ran2 = await user.postForm(
        '/accounts/acct-late/payee',
        { _csrf: user.csrf, _verify_kit_intent: second },
        sameSite,
      );
      expect(ran2.body).toContain('payee saved');
      expect(mine()).toBe(1);
      // The first confirmation page, still open in another tab (or the back button), under a fresh grant.
      const replayed = await confirmFirst();
      expect(replayed.status).toBe(409);
      expect(mine()).toBe(1);
    });
  });

  it('a kept form confirmed too late by a script (Accept: */*) gets the 401 challenge and stays kept with its fields: verified again and confirmed, it runs once with them', async () => {
    const user = await suite.app.agent().signIn('script-too-late');
    const sameSite = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
    const kept = await user.postForm('/accounts/acct-script/payee', { iban: 'SCRIPT-1' }, sameSite);
    const started = await user.start(confirmForm(kept.body).action, { intent: confirmForm(kept.body).intent });
    // Past the payout guard's 300 s, and within the kept form's 15 minutes.
    await suite.app.clock.shifted(301_000, async () => {
      const confirm = await user.request((await user.request(await user.verifyOnHostedPage(started))).location!);
      const first = /name="_verify_kit_intent" value="([^"]+)"/.exec(confirm.body)![1]!;
      const confirmByScript = (intent: string) =>
        user.postForm(
          '/accounts/acct-script/payee',
          { _csrf: user.csrf, _verify_kit_intent: intent },
          { ...sameSite, accept: '*/*' },
        );
      const challenged = await confirmByScript(first);
      expect(challenged.status).toBe(401);
      const { intent } = await challenged.json<{ intent: string }>();
      const again = await user.start('payout', { intent });
      const landing = await user.request(await user.verifyOnHostedPage(again));
      // Back to the kept form's own confirmation, not to a page: its fields are still kept.
      expect(landing.location).toBe(`/verify/step-up?intent=${intent}`);
      const confirmed = await confirmByScript(intent);
      expect(confirmed.status).toBe(200);
      expect(ran.filter((r) => r.user === 'script-too-late')).toEqual([
        { route: 'payee', user: 'script-too-late', fields: { iban: 'SCRIPT-1' } },
      ]);
      expect((await confirmByScript(first)).status).toBe(409);
    });
  });

  it('refused within 2 minutes of a grant too old for this resource, the user is told so on a 403 page; from 2 minutes on, the usual page', async () => {
    const user = await suite.app.agent().signIn('just-granted-late');
    const sameSite = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
    const form = confirmForm((await user.postForm('/accounts/acct-1/payee', { iban: 'ONE' }, sameSite)).body);
    const started = await user.start(form.action, { intent: form.intent });
    // Landed past the payout guard's 300 s: a grant for acct-1, already too old for it.
    await suite.app.clock.shifted(301_000, async () => {
      await user.request(await user.verifyOnHostedPage(started));
    });
    const [grant] = await suite.app.kit.grants.list({ userRef: 'user-just-granted-late', scope: 'payout' });
    const askAt = (at: number) =>
      suite.app.clock.pinned(at, () => user.postForm('/accounts/acct-1/payee', { iban: 'ONE' }, sameSite));
    const within = await askAt(grant!.grantedAt + 120_000);
    expect(within.status).toBe(403);
    expect(within.body).toContain('<p role="alert">Your confirmation took longer than this page allows');
    const after = await askAt(grant!.grantedAt + 120_001);
    expect(after.status).toBe(200);
    expect(after.body).toContain('Confirm it’s you');
    expect(after.body).not.toContain('role="alert"');
    expect(ran.filter((r) => r.user === 'just-granted-late')).toEqual([]);
  });

  it('refused within 2 minutes of a grant for another resource, the user is told so on a 403 page; from 2 minutes on, the usual page', async () => {
    const user = await suite.app.agent().signIn('just-granted-other');
    const sameSite = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
    await verifyFrom(user, (await user.postForm('/accounts/acct-1/payee', { iban: 'ONE' }, sameSite)).body);
    const [grant] = await suite.app.kit.grants.list({ userRef: 'user-just-granted-other', scope: 'payout' });
    expect(grant!.resourceKey).toBe('acct-1');
    const askAt = (at: number) =>
      suite.app.clock.pinned(at, () => user.postForm('/accounts/acct-2/payee', { iban: 'TWO' }, sameSite));
    const within = await askAt(grant!.grantedAt + 120_000);
    expect(within.status).toBe(403);
    expect(within.body).toContain('<p role="alert">Your confirmation was for something else');
    const after = await askAt(grant!.grantedAt + 120_001);
    expect(after.status).toBe(200);
    expect(after.body).toContain('Confirm it’s you');
    expect(after.body).not.toContain('role="alert"');
    expect(ran.filter((r) => r.user === 'just-granted-other')).toEqual([]);
  });

  it('a kept form runs its handler once, with its original fields, only after the user confirms', async () => {
    const alice = await suite.app.agent().signIn('alice');
    const before = payeeRuns();
    const kept = await alice.request('/accounts/acct-7/payee', {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: alice.origin,
        'sec-fetch-site': 'same-origin',
      },
      body: 'iban=FR7630006&holder=Alice',
    });
    expect(kept.body).toContain('You asked to: change the payout account.');
    expect(payeeRuns()).toBe(before);

    const { landing } = await verifyFrom(alice, kept.body);
    expect(landing.location).toMatch(/^\/verify\/step-up\?intent=[A-Za-z0-9_-]{43}$/);
    expect(payeeRuns()).toBe(before); // verifying alone runs nothing
    const confirm = await alice.request(landing.location!);
    expect(confirm.status).toBe(200);
    expect(confirm.body).toContain('Now confirm that you want to: change the payout account.');
    // What is confirmed is named (the method and path), but the fields are the app's: never shown.
    expect(confirm.body).toContain('<code>POST /accounts/acct-7/payee</code>');
    expect(confirm.body).not.toContain('FR7630006');
    expect(confirm.body).toContain('<form method="post">'); // to this page, which sends it on to the kept path
    const intentId = /name="_verify_kit_intent" value="([^"]+)"/.exec(confirm.body)![1]!;
    const csrf = /name="_csrf" value="([^"]+)"/.exec(confirm.body)![1]!;
    const send = () =>
      alice.postForm(
        '/accounts/acct-7/payee',
        { _csrf: csrf, _verify_kit_intent: intentId },
        { origin: alice.origin, 'sec-fetch-site': 'same-origin' },
      );
    // Without the confirm page's CSRF token the kept form runs nothing, and stays kept for the page's own.
    const forged = await alice.postForm(
      '/accounts/acct-7/payee',
      { _csrf: 'forged', _verify_kit_intent: intentId },
      { origin: alice.origin, 'sec-fetch-site': 'same-origin' },
    );
    expect(forged.status).toBe(403);
    expect(payeeRuns()).toBe(before);
    const [first, second] = await Promise.all([send(), send()]);
    expect([first.status, second.status].sort()).toEqual([200, 409]);
    expect(payeeRuns()).toBe(before + 1);
    expect(ran.at(-1)).toEqual({ route: 'payee', user: 'alice', fields: { iban: 'FR7630006', holder: 'Alice' } });
    const replay = await send();
    expect(replay.status).toBe(409);
    expect(payeeRuns()).toBe(before + 1);
  });

  it('a fresh grant opens its page however many newer grants the user holds in other browser sessions and for other resources', async () => {
    const user = await suite.app.agent().signIn('many-grants');
    await verifyFrom(user, (await user.request('/security')).body);
    const stepUp = suite.app.store.stepUp!;
    const [own] = await stepUp.listGrants({ userRef: userNamed('many-grants').userRef, scope: 'security', limit: 50 });
    // Newer grants of the same scope: 60 in the user's other browser sessions, 60 for other
    // resources in this one (what another session of the user, or many accounts, leave behind).
    for (let n = 1; n <= 60; n++) {
      const newer = { ...own!, startedAt: own!.startedAt + n, grantedAt: own!.grantedAt + n };
      await stepUp.insertGrant({ ...newer, sessionId: `elsewhere-${n}`, browserSession: `other-browser-${n}` });
      await stepUp.insertGrant({ ...newer, sessionId: `other-resource-${n}`, resourceKey: `acct-${n}` });
    }
    const page = await user.request('/security');
    expect(page.body).toContain('codes for many-grants');
    expect(page.status).toBe(200);
  });

  it('a grant for one resource never opens another: bindTo keys the grant', async () => {
    const alice = await suite.app.agent().signIn('alice');
    const post = (account: string, body: string) =>
      alice.request(`/accounts/${account}/payee`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          origin: alice.origin,
          'sec-fetch-site': 'same-origin',
        },
        body,
      });
    const kept = await post('acct-a', 'iban=A');
    const { landing } = await verifyFrom(alice, kept.body);
    expect(landing.status).toBe(303);
    const before = payeeRuns();
    const direct = await post('acct-a', 'iban=A2'); // a fresh grant for acct-a lets a new post through
    expect(direct.body).toContain('payee saved');
    const other = await post('acct-b', 'iban=B');
    expect(other.body).toContain('Confirm it’s you');
    expect(payeeRuns()).toBe(before + 1);
  });

  it('a JSON request gets 401 verification_required with an RFC 9470-style challenge', async () => {
    const alice = await suite.app.agent().signIn('alice');
    const answer = await alice.request('/export', { headers: { accept: 'application/json' } });
    expect(answer.status).toBe(401);
    expect(answer.headers.get('www-authenticate')).toBe(
      'VerifyKit error="insufficient_user_authentication", scope="export", max_age="600"',
    );
    const body = await answer.json<Record<string, unknown>>();
    expect(body).toMatchObject({
      error: 'verification_required',
      scope: 'export',
      maxAge: 600,
      start: '/verify/start',
    });
    expect(body.intent).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('a request that is not a navigation (a plain fetch) gets the 401 challenge, never a 200 page; a navigation gets the page', async () => {
    const erin = await suite.app.agent().signIn('erin');
    const fetched = await erin.request('/export', { headers: { accept: '*/*' } }); // fetch's default
    expect(fetched.status).toBe(401);
    expect(fetched.headers.get('www-authenticate')).toContain('insufficient_user_authentication');
    const posted = await erin.postForm(
      '/accounts/acct-1/payee',
      { iban: 'FETCHED' },
      { origin: erin.origin, 'sec-fetch-site': 'same-origin', accept: '*/*' },
    );
    expect(posted.status).toBe(401);
    expect(posted.headers.get('www-authenticate')).toContain('insufficient_user_authentication');
    const navigation = await erin.request('/export', {
      headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' },
    });
    expect(navigation.status).toBe(200);
    expect(navigation.body).toContain('Confirm it’s you');
    expect(ran.filter((r) => r.user === 'erin')).toEqual([]);
  });

  it('refuses a file upload and a cross-site form before keeping or sending anything', async () => {
    const alice = await suite.app.agent().signIn('alice');
    const texts = await smsCount();
    const upload = await alice.request('/accounts/acct-1/payee', {
      method: 'POST',
      headers: {
        'content-type': 'multipart/form-data; boundary=x',
        origin: alice.origin,
        'sec-fetch-site': 'same-origin',
      },
      body: '--x\r\nContent-Disposition: form-data; name="iban"\r\n\r\nX\r\n--x--\r\n',
    });
    expect(upload.status).toBe(415);
    const crossSite = await alice.request('/accounts/acct-1/payee', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'cross-site' },
      body: 'iban=EVIL',
    });
    expect(crossSite.status).toBe(403);
    expect(crossSite.body).not.toContain('Confirm it’s you');
    expect(await smsCount()).toBe(texts);
  });

  it('a file upload reaches its handler once the grant is fresh; without one a script’s upload gets the 401 challenge, nothing of the file kept', async () => {
    const frank = await suite.app.agent().signIn('frank');
    const upload = (accept?: string) =>
      frank.request('/documents', {
        method: 'POST',
        headers: {
          'content-type': 'multipart/form-data; boundary=x',
          origin: frank.origin,
          'sec-fetch-site': 'same-origin',
          ...(accept === undefined ? {} : { accept }),
        },
        body: '--x\r\nContent-Disposition: form-data; name="file"; filename="id.txt"\r\n\r\nSECRET-SCAN\r\n--x--\r\n',
      });
    // A script (fetch with FormData) is told to step up, as for any request of its own.
    const challenged = await upload('*/*');
    expect(challenged.status).toBe(401);
    expect(await challenged.json()).toMatchObject({ error: 'verification_required', scope: 'security' });
    expect(await intentsHolding('SECRET-SCAN')).toBe(0);
    // A form's upload without a grant cannot be kept: refused, as before.
    expect((await upload()).status).toBe(415);
    await verifyFrom(frank, (await frank.request('/security')).body);
    // With the grant fresh, nothing is kept: the upload goes to the handler, body intact.
    for (const accept of [undefined, '*/*']) {
      const answer = await upload(accept);
      expect(answer.status, accept).toBe(200);
      expect(await answer.json(), accept).toEqual({ uploaded: 91 });
    }
    expect(ran.filter((r) => r.route === 'documents' && r.user === 'frank')).toHaveLength(2);
  });

  it('a form whose body is not a urlencoded form (enctype text/plain) is refused without a grant, nothing kept, rather than kept empty and run without its fields', async () => {
    const tess = await suite.app.agent().signIn('tess');
    const sent = await tess.request('/accounts/acct-t/payee', {
      method: 'POST',
      headers: { 'content-type': 'text/plain', origin: tess.origin, 'sec-fetch-site': 'same-origin' },
      body: 'iban=PLAIN-TEXT-IBAN\r\n',
    });
    expect(sent.status).toBe(400);
    expect(sent.body).not.toContain('Confirm it’s you');
    const [kept] = await suite.app.query<{ n: number | string }>(
      'SELECT count(*) AS n FROM verify_kit_intents WHERE user_ref = $1',
      ['user-tess'],
    );
    expect(Number(kept!.n)).toBe(0);
  });

  it('a form the app read as text before the guard is refused without a grant, nothing kept: kept, its fields would be lost and the handler run with the confirmation’s body', async () => {
    const nora = await suite.app.agent().signIn('nora');
    const sameSite = { origin: nora.origin, 'sec-fetch-site': 'same-origin' };
    const sent = await nora.postForm('/notes', { note: 'READ-AS-TEXT' }, sameSite);
    expect(sent.status).toBe(400);
    expect(sent.body).not.toContain('Confirm it’s you');
    const [kept] = await suite.app.query<{ n: number | string }>(
      'SELECT count(*) AS n FROM verify_kit_intents WHERE user_ref = $1',
      ['user-nora'],
    );
    expect(Number(kept!.n)).toBe(0);
    expect(suite.app.logs.some((line) => line.includes('read by the app before the guard'))).toBe(true);
    // With a fresh grant nothing is kept: the handler gets the body as the app read it.
    await verifyFrom(nora, (await nora.request('/security')).body);
    const granted = await nora.postForm('/notes', { note: 'WITH-GRANT' }, sameSite);
    expect(granted.body).toContain('note saved');
    expect(ran.filter((r) => r.route === 'notes')).toEqual([
      { route: 'notes', user: 'nora', fields: { body: 'note=WITH-GRANT' } },
    ]);
  });

  it('keeps a form with Origin: null or none only when Sec-Fetch-Site says same-origin: otherwise 403, nothing kept', async () => {
    const dana = await suite.app.agent().signIn('dana');
    const keptRows = async () => {
      const [row] = await suite.app.query<{ n: number | string }>(
        'SELECT count(*) AS n FROM verify_kit_intents WHERE user_ref = $1',
        ['user-dana'],
      );
      return Number(row!.n);
    };
    // Another site's form in a sandboxed frame, or in a browser without fetch metadata: no token is
    // checked before it is kept, and the confirmation's fresh one would carry its fields.
    const unvouched: Record<string, string>[] = [{ origin: 'null' }, {}];
    for (const headers of unvouched) {
      const forged = await dana.postForm('/accounts/acct-1/payee', { iban: 'ATTACKER-IBAN' }, headers);
      expect(forged.status).toBe(403);
      expect(forged.body).not.toContain('Confirm it’s you');
    }
    expect(await keptRows()).toBe(0);
    // The site's own form under Referrer-Policy: no-referrer: Origin null, fetch metadata same-origin.
    const own = await dana.postForm(
      '/accounts/acct-1/payee',
      { iban: 'DE001' },
      { origin: 'null', 'sec-fetch-site': 'same-origin' },
    );
    expect(own.body).toContain('Confirm it’s you');
    expect(await keptRows()).toBe(1);
    expect(ran.filter((r) => r.user === 'dana')).toEqual([]);
  });

  it('a user without a phone number is refused (no silent bypass)', async () => {
    USERS.nophone = { userRef: 'user-nophone', destination: '' };
    try {
      const nobody = await suite.app.agent().signIn('nophone');
      const answer = await nobody.request('/security');
      expect(answer.status).toBe(403);
      expect(answer.body).toContain('no phone number');
      expect(ran.some((r) => r.user === 'nophone')).toBe(false);
    } finally {
      delete USERS.nophone;
    }
  });

  it('a script’s request of a user without a phone number gets a JSON 403 it can read, never the HTML page', async () => {
    USERS.nophonejson = { userRef: 'user-nophonejson', destination: '' };
    try {
      const nobody = await suite.app.agent().signIn('nophonejson');
      for (const accept of ['application/json', '*/*']) {
        const answer = await nobody.request('/export', { headers: { accept } });
        expect(answer.status, accept).toBe(403);
        expect(answer.headers.get('content-type'), accept).toMatch(/^application\/json/);
        expect(answer.headers.get('cache-control'), accept).toBe('no-store');
        expect(await answer.json(), accept).toEqual({
          error: 'step_up_unenrolled',
          scope: 'export',
          message: expect.stringContaining('no phone number') as unknown,
        });
      }
    } finally {
      delete USERS.nophonejson;
    }
  });

  it('a kept form confirmed by a user whose number is gone since is refused as unenrolled, never asked for a code; it stays kept', async () => {
    USERS.numberGone = { userRef: 'user-numberGone', destination: '+15550009911' };
    try {
      const user = await suite.app.agent().signIn('numberGone');
      const sameSite = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
      const kept = confirmForm((await user.postForm('/accounts/acct-gone/payee', { iban: 'GONE-1' }, sameSite)).body);
      // The number removed from the account before the user pressed the kept form's button.
      USERS.numberGone.destination = '';
      const texts = await smsCount();
      const confirm = (accept: string) =>
        user.postForm(
          '/accounts/acct-gone/payee',
          { _csrf: user.csrf, _verify_kit_intent: kept.intent },
          { ...sameSite, accept },
        );
      const page = await confirm('text/html');
      expect(page.status).toBe(403);
      expect(page.body).toContain('no phone number');
      expect(page.body).not.toContain('Confirm it’s you');
      const json = await confirm('application/json');
      expect(json.status).toBe(403);
      expect(await json.json()).toMatchObject({ error: 'step_up_unenrolled', scope: 'payout' });
      expect(await smsCount()).toBe(texts);
      expect(ran.filter((r) => r.user === 'numberGone')).toEqual([]);
      // Nothing kept anew, nothing used up: the form is still there once the user has a number again.
      const rows = await suite.app.query<{ intent_id: string; consumed_at: unknown }>(
        'SELECT intent_id, consumed_at FROM verify_kit_intents WHERE user_ref = $1',
        ['user-numberGone'],
      );
      expect(rows).toEqual([{ intent_id: kept.intent, consumed_at: null }]);
    } finally {
      delete USERS.numberGone;
    }
  });

  it('a verification the sweep learns of after maxAge grants nothing fresh', async () => {
    const bob = await suite.app.agent().signIn('bob');
    const page = await bob.request('/security');
    const form = confirmForm(page.body);
    const started = await bob.start(form.action, { intent: form.intent });
    const location = await bob.verifyOnHostedPage(started); // and lands only after maxAge
    await suite.app.clock.shifted((TEN_MINUTES + 60) * 1000, async () => {
      const report = await suite.app.kit.runSweep();
      expect(report.fulfilled).toBe(1);
      const grantsOf = async () =>
        (await suite.app.kit.grants.list({ userRef: 'user-bob', scope: 'security' })).map((g) => g.sessionId);
      // The sweep grants no browser session; bob's own landing does, aged from the attempt's start.
      expect(await grantsOf()).not.toContain(started.sessionId);
      expect((await bob.request(location)).status).toBe(303);
      expect(await grantsOf()).toContain(started.sessionId);
      expect((await bob.request('/security')).body).toContain('Confirm it’s you');
    });
  });

  it('kit.grants lists a user’s grants and revoke ends them', async () => {
    const alice = await suite.app.agent().signIn('alice');
    await verifyFrom(alice, (await alice.request('/security')).body);
    expect((await alice.request('/security')).body).toContain('codes for alice');
    const listed = await suite.app.kit.grants.list({ userRef: 'user-alice' });
    expect(listed.length).toBeGreaterThan(0);
    expect(Object.keys(listed[0]!).sort()).toEqual(['grantedAt', 'resourceKey', 'scope', 'sessionId', 'startedAt']);
    expect(await suite.app.kit.grants.revoke({ userRef: 'user-alice', scope: 'security' })).toBeGreaterThan(0);
    expect((await alice.request('/security')).body).toContain('Confirm it’s you');
    expect(await suite.app.kit.grants.list({ userRef: 'user-alice', scope: 'security' })).toEqual([]);
  });

  it('a confirmed form’s fields are gone from the store once its handler ran with them', async () => {
    const user = await suite.app.agent().signIn('kept-fields');
    const sameSite = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
    const secret = 'IBAN-SECRET-DE89370400440532013000';
    const kept = await user.postForm('/accounts/acct-r1/payee', { iban: secret }, sameSite);
    expect(await intentsHolding(secret)).toBe(1);
    const { landing } = await verifyFrom(user, kept.body);
    const confirm = await user.request(landing.location!);
    const intentId = /name="_verify_kit_intent" value="([^"]+)"/.exec(confirm.body)![1]!;
    const csrf = /name="_csrf" value="([^"]+)"/.exec(confirm.body)![1]!;
    const confirmed = { _csrf: csrf, _verify_kit_intent: intentId };
    const done = await user.postForm('/accounts/acct-r1/payee', confirmed, sameSite);
    expect(done.body).toContain('payee saved');
    expect(ran.at(-1)).toEqual({ route: 'payee', user: 'kept-fields', fields: { iban: secret } });
    expect(await intentsHolding(secret)).toBe(0);
  });

  it("an abandoned kept form is deleted by the first sweep after it expired, counted in the sweep job's line", async () => {
    const user = await suite.app.agent().signIn('abandoned-form');
    const secret = 'IBAN-SECRET-ABANDONED';
    const kept = await user.postForm(
      '/accounts/acct-r2/payee',
      { iban: secret },
      { origin: user.origin, 'sec-fetch-site': 'same-origin' },
    );
    expect(kept.body).toContain('Confirm it’s you');
    // Still live a minute before it expires: a sweep keeps it.
    await suite.app.clock.shifted(INTENT_TTL_MS - 60_000, () => suite.app.kit.runSweep());
    expect(await intentsHolding(secret)).toBe(1);
    const lines: string[] = [];
    await suite.app.clock.shifted(INTENT_TTL_MS + 60_000, () =>
      runSweepJob({
        kit: suite.app.kit,
        argv: ['--once', '--nice', '0'],
        env: {},
        print: (line) => lines.push(line),
        handleSignals: false,
      }),
    );
    expect(await intentsHolding(secret)).toBe(0);
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ event: 'sweep', intentsDeleted: expect.any(Number) });
    expect(JSON.parse(lines.at(-1)!).intentsDeleted).toBeGreaterThan(0);
  });

  it('a verification started before kit.grants.revoke grants nothing when it lands afterwards', async () => {
    const user = await suite.app.agent().signIn('revoked-in-flight');
    const form = confirmForm((await user.request('/security')).body);
    const started = await user.start(form.action, { intent: form.intent });
    const location = await user.verifyOnHostedPage(started); // the code is entered; the landing is still to come
    // The number (or password) changes now: the app revokes every grant of the user.
    await suite.app.kit.grants.revoke({ userRef: 'user-revoked-in-flight' });
    expect((await user.request(location)).status).toBe(303);
    expect(await suite.app.kit.attempts.get(started.sessionId)).toMatchObject({ outcome: 'fulfilled' });
    expect(await suite.app.kit.grants.list({ userRef: 'user-revoked-in-flight' })).toEqual([]);
    const after = await user.request('/security');
    expect(after.body).not.toContain('codes for revoked-in-flight');
    expect(after.body).toContain('Confirm it’s you');
    // A verification started after the revocation grants as before.
    await verifyFrom(user, after.body);
    expect((await user.request('/security')).body).toContain('codes for revoked-in-flight');
  });

  it(`a user with ${LIVE_INTENTS_PER_USER} requests waiting gets a 429 for the next one: nothing is kept, nothing already kept is lost`, async () => {
    const user = await suite.app.agent().signIn('many-pending');
    const sameSite = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
    const kept: string[] = [];
    for (let i = 0; i < LIVE_INTENTS_PER_USER; i++) {
      const page = await user.postForm(`/accounts/acct-${i}/payee`, { iban: 'x'.repeat(1000) }, sameSite);
      kept.push(confirmForm(page.body).intent);
    }
    const refused = await user.postForm('/accounts/acct-more/payee', { iban: 'ONE-TOO-MANY' }, sameSite);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe(String(INTENT_TTL_MS / 1000));
    expect(refused.body).toContain('Too many verification attempts. Try again in 15 minutes.');
    const json = await user.request('/export', { headers: { accept: 'application/json' } });
    expect(json.status).toBe(429);
    expect(await json.json()).toMatchObject({ error: 'rate_limited' });
    const rows = await suite.app.query<{ intent_id: string }>(
      'SELECT intent_id FROM verify_kit_intents WHERE user_ref = $1',
      ['user-many-pending'],
    );
    expect(rows.map((r) => r.intent_id).sort()).toEqual([...kept].sort());
    expect(ran.filter((r) => r.user === 'many-pending')).toEqual([]);
  });
});

describeEachAppStore('step-up: a form reached through a method override', (_store, storeOptions) => {
  let app: TestApp | undefined;
  const ran: string[] = [];
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: { scopes: [{ name: 'payout', operationSensitivity: 'sensitive', label: 'change the payout account' }] },
      ownRoutes: (a, kit) => {
        a.use('/items', express.urlencoded({ extended: false }), methodOverride);
        a.put('/items/:id', kit.requireRecentVerification({ scope: 'payout', maxAge: 300 }), (req, res) => {
          ran.push(`${req.method} ${JSON.stringify(req.body)}`);
          res.type('html').send('<h1 id="saved">item saved</h1>');
        });
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('after the verification the user confirms the kept PUT on the kit’s page, and it runs once, as a PUT', async () => {
    const alice = await app!.agent().signIn('alice');
    const sameSite = { origin: alice.origin, 'sec-fetch-site': 'same-origin' };
    const kept = await alice.postForm('/items/9', { _method: 'PUT', name: 'new' }, sameSite);
    expect(kept.body).toContain('Confirm it’s you');
    const form = confirmForm(kept.body);
    const started = await alice.start(form.action, { intent: form.intent });
    const landing = await alice.request(await alice.verifyOnHostedPage(started));
    expect(landing.status).toBe(303);
    // A kept form goes to the kit's confirmation page, as a kept POST does.
    expect(landing.location).toMatch(/^\/verify\/step-up\?intent=/);
    const confirm = await alice.request(landing.location!);
    expect(confirm.body).toContain('<code>PUT /items/9</code>');
    const hidden = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(confirm.body)![1]!;
    const send = () =>
      alice.postForm(
        '/items/9',
        { _csrf: hidden('_csrf'), _verify_kit_intent: hidden('_verify_kit_intent'), _method: hidden('_method') },
        sameSite,
      );
    expect((await send()).body).toContain('item saved');
    expect(ran).toEqual(['PUT {"name":"new"}']);
    expect((await send()).status).toBe(409);
    expect(ran).toHaveLength(1);
  });
});

describe('requireRecentVerification options', () => {
  it('refuses an undeclared scope and a maxAge that is not whole seconds, saying how to fix the call', async () => {
    const app = await startTestApp({ kit: { scopes: [{ name: 'security', operationSensitivity: 'sensitive' }] } });
    try {
      let error: unknown;
      try {
        app.kit.requireRecentVerification({ scope: 'secuirty', maxAge: 600.5 });
      } catch (caught) {
        error = caught;
      }
      expect(error).toMatchObject({ code: KitErrorCode.InvalidOptions });
      expect(String((error as Error).message)).toContain('declared: security');
      expect(String((error as Error).message)).toContain('whole number of seconds');
    } finally {
      await app.close();
    }
  });

  it('refuses a scope whose name an action already has', async () => {
    await expect(
      startTestApp({ kit: { scopes: [{ name: 'grant', operationSensitivity: 'normal' }] } }),
    ).rejects.toThrow(/scopes and actions share one set of names/);
  });
});
