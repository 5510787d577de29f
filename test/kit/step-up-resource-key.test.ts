/**
 * A resource key as bindTo reads it from the request, however long: a path segment of a few
 * thousand characters (an id the app accepts, or a user's own long URL) is bound, kept and granted
 * on every store alike. PostgreSQL's index on the grants cannot hold a key that long, so the grant
 * the landing writes failed there after the user had been texted and had entered the code.
 */
import { randomBytes } from 'node:crypto';
import express, { type RequestHandler } from 'express';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Agent } from '../support/agent.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { confirmForm, SCOPES, useStepUpApp } from '../support/step-up.ts';
import { userNamed } from '../support/users.ts';

describeEachAppStore('a long resource key', (_store, storeOptions) => {
  const suite = useStepUpApp(storeOptions);

  it('a kept form for an account id of 4000 characters (as bindTo reads it from the path) is granted at the landing and runs once, for that account only', async () => {
    const user = await suite.app.agent().signIn('long-account');
    const sameSite = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
    // Random, so PostgreSQL cannot compress it below its index's limit.
    const account = randomBytes(3000).toString('base64url');
    const kept = await user.postForm(`/accounts/${account}/payee`, { iban: 'LONG-1' }, sameSite);
    expect(kept.status).toBe(200);
    const form = confirmForm(kept.body);
    const started = await user.start(form.action, { intent: form.intent });
    const landing = await user.request(await user.verifyOnHostedPage(started));
    expect(landing.status).toBe(303);
    const confirm = await user.request(landing.location!);
    const intentId = /name="_verify_kit_intent" value="([^"]+)"/.exec(confirm.body)![1]!;
    const ran = await user.postForm(
      `/accounts/${account}/payee`,
      { _csrf: user.csrf, _verify_kit_intent: intentId },
      sameSite,
    );
    expect(ran.status).toBe(200);
    expect(ran.body).toContain('payee saved');
    expect(suite.ran.filter((r) => r.user === 'long-account')).toEqual([
      { route: 'payee', user: 'long-account', fields: { iban: 'LONG-1' } },
    ]);
    // The grant opens that account alone: one differing in its last character is asked again.
    // (The random id ends in 'X' once in 64 runs; the other account must still differ from it.)
    const otherLast = account.endsWith('X') ? 'Y' : 'X';
    const other = await user.postForm(
      `/accounts/${account.slice(0, -1)}${otherLast}/payee`,
      { iban: 'LONG-2' },
      sameSite,
    );
    expect(other.body).toContain('Confirm it’s you');
    const direct = await user.postForm(`/accounts/${account}/payee`, { iban: 'LONG-3' }, sameSite);
    expect(direct.body).toContain('payee saved');
    // The grant is bound to the key's digest; an account id spelt as that digest is another key.
    const [grant] = await suite.app.kit.grants.list({ userRef: userNamed('long-account').userRef, scope: 'payout' });
    expect(grant!.resourceKey).toMatch(/^sha256:[A-Za-z0-9_-]{43}$/);
    const spelt = await user.postForm(`/accounts/${grant!.resourceKey}/payee`, { iban: 'LONG-4' }, sameSite);
    expect(spelt.body).toContain('Confirm it’s you');
    expect(suite.ran.filter((r) => r.user === 'long-account')).toHaveLength(2);
  });
});

/**
 * A resource key read from a JSON body may hold a lone UTF-16 surrogate (`"\ud800"`), which no
 * store keeps as sent (each writes replacement characters), so the grant the landing wrote never matched the
 * key read again, and each retry was asked again and texted again. Such a key is refused with a
 * 400 before anything is kept or texted; a well-formed key (an emoji's surrogate pair) is granted.
 */
describeEachAppStore('a resource key that is not well-formed Unicode', (_store, storeOptions) => {
  let app: TestApp | undefined;
  const ran: string[] = [];
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: { scopes: [...SCOPES] },
      ownRoutes: (a, kit) => {
        a.post(
          '/transfers',
          express.json(),
          kit.requireRecentVerification({
            scope: 'payout',
            maxAge: 300,
            bindTo: (req) => String((req.body as { to?: unknown }).to),
          }),
          (req, res) => {
            ran.push(String((req.body as { to?: unknown }).to));
            res.json({ sent: true });
          },
        );
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  const transfer = (user: Agent, json: string) =>
    user.request('/transfers', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', origin: user.origin },
      body: json,
    });
  const keptIntents = async () =>
    (await app!.query<{ n: number | string }>('SELECT count(*) AS n FROM verify_kit_intents'))[0]!.n;

  it('a key holding a lone surrogate is refused with 400 before anything is kept or texted; a well-formed one is granted and opens its resource again', async () => {
    const user = await app!.agent().signIn('surrogate-key');
    const texts = (await app!.emulator.control.outbox()).length;
    const intents = await keptIntents();
    for (const body of ['{"to":"acct-\\ud800"}', '{"to":"acct-\\udc00x"}', '{"to":"\\ude00\\ud83d"}']) {
      const refused = await transfer(user, body);
      expect(refused.status, body).toBe(400);
      expect(await refused.json(), body).toMatchObject({ error: 'invalid_action_params' });
    }
    expect(await keptIntents()).toBe(intents);
    expect((await app!.emulator.control.outbox()).length).toBe(texts);
    expect(app!.logs.some((line) => line.includes('not well-formed Unicode'))).toBe(true);

    // An emoji is a well-formed pair: kept, granted, and found again as the same key.
    const emoji = '{"to":"acct-\\ud83d\\ude00"}';
    const challenge = await transfer(user, emoji);
    expect(challenge.status).toBe(401);
    const { intent } = await challenge.json<{ intent: string }>();
    const started = await user.start('payout', { intent });
    expect((await user.request(await user.verifyOnHostedPage(started))).status).toBe(303);
    const retried = await transfer(user, emoji);
    expect(retried.status).toBe(200);
    expect(ran).toEqual(['acct-😀']);
    expect((await app!.emulator.control.outbox()).length).toBe(texts + 1);
  });
});

/**
 * Express 5 reads a wildcard parameter (`/files/*path`) as a list of path segments, where Express 4
 * read a string: a bindTo returning it as it is binds nothing. It is the app's code to fix, not the
 * user's input: a 500 whose log names the fix, never a 400 blaming a field sent twice.
 */
const ON_EXPRESS_4 = process.env.EXPECTED_EXPRESS_MAJOR === '4';
/** Express 4 matches no `*path` (a 404): its wildcard is `:path(*)`, read as one string. */
const WILDCARD_ROUTE = ON_EXPRESS_4 ? '/files/:path(*)' : '/files/*path';
/** The path as its segments, as Express 5 reads the wildcard: under Express 4 the app splits it itself. */
const pathAsSegments: RequestHandler = (req, _res, next) => {
  const params = req.params as Record<string, unknown>;
  if (ON_EXPRESS_4 && typeof params.path === 'string') params.path = params.path.split('/');
  next();
};

describeEachAppStore('a wildcard parameter read as a list, as a resource key', (_store, storeOptions) => {
  let app: TestApp | undefined;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: { scopes: [...SCOPES] },
      ownRoutes: (a, kit) => {
        a.get(
          WILDCARD_ROUTE,
          pathAsSegments,
          kit.requireRecentVerification({
            scope: 'security',
            maxAge: 600,
            bindTo: (req) => (req.params as Record<string, unknown>).path as string,
          }),
          (_req, res) => {
            res.send('file shown');
          },
        );
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('a bindTo returning the wildcard’s list fails closed (500, nothing kept), its log naming the fix, not a field sent twice', async () => {
    const user = await app!.agent().signIn('wildcard');
    const kept = async () =>
      Number((await app!.query<{ n: number | string }>('SELECT count(*) AS n FROM verify_kit_intents'))[0]!.n);
    const before = await kept();
    const answer = await user.request('/files/reports/2026.pdf');
    expect(answer.status).toBe(500);
    expect(answer.body).not.toContain('file shown');
    expect(await kept()).toBe(before);
    const line = app!.logs.find((l) => l.includes('"level":"error"') && l.includes('bindTo returned a list'));
    expect(line).toContain("req.params.name.join('/')");
    expect(line).not.toContain('2026.pdf');
    expect(app!.logs.some((l) => l.includes('a field sent more than once'))).toBe(false);
  });
});
