/**
 * A guard's bindTo reads the resource from the request, and a query or form field can be sent twice
 * (`?account=a&account=b`, read as a list): such a request names two resources, so it is bad input,
 * refused with 400 `invalid_action_params` before anything is kept or texted, never the 500
 * `hook_failed` of a broken hook. A bindTo that throws for any other reason still fails closed
 * (500, logged, nothing kept or run). On SQLite and PostgreSQL.
 */
import express, { type Request } from 'express';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { englishMessages } from '../../middleware/pages/messages.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { SCOPES } from '../support/step-up.ts';

/** The field as an app reads it without a type check (as in plain JavaScript): a list when sent twice. */
const accountIn = (fields: unknown) => (fields as { account?: string }).account;

describeEachAppStore('a resource field sent twice to a guard', (_store, storeOptions) => {
  let app: TestApp | undefined;
  const ran: string[] = [];
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: { scopes: [...SCOPES] },
      ownRoutes: (a, kit) => {
        const guard = (bindTo: (req: Request) => string | undefined) =>
          kit.requireRecentVerification({ scope: 'payout', maxAge: 300, bindTo });
        a.get(
          '/statements',
          guard((req) => accountIn(req.query)),
          (req, res) => {
            ran.push(`statements ${String(accountIn(req.query))}`);
            res.send('statements shown');
          },
        );
        a.post(
          '/payees',
          guard((req) => accountIn(req.body)),
          (req, res) => {
            ran.push(`payee ${String(accountIn(req.body))}`);
            res.send('payee saved');
          },
        );
        a.post(
          '/transfers',
          express.json(),
          guard((req) => accountIn(req.body)),
          (_req, res) => {
            ran.push('transfer');
            res.json({ sent: true });
          },
        );
        // A form read with brackets as objects (qs), as Express 4 reads every query by default.
        a.post(
          '/payees-extended',
          express.urlencoded({ extended: true }),
          guard((req) => accountIn(req.body)),
          (_req, res) => {
            ran.push('payee extended');
            res.send('payee saved');
          },
        );
        // An app's slip: the account id as a number, or the account record itself, where a key is asked for.
        a.post(
          '/numbered',
          guard((req) => Number(accountIn(req.body)) as unknown as string),
          (_req, res) => {
            ran.push('numbered');
            res.send('ran');
          },
        );
        a.post(
          '/record',
          guard((req) => ({ account: accountIn(req.body) }) as unknown as string),
          (_req, res) => {
            ran.push('record');
            res.send('ran');
          },
        );
        // The account's record where its id is asked for, one that refers to itself (as an ORM's may).
        a.post(
          '/circular',
          guard((req) => {
            const record: Record<string, unknown> = { account: accountIn(req.body) };
            record.self = record;
            return record as unknown as string;
          }),
          (_req, res) => {
            ran.push('circular');
            res.send('ran');
          },
        );
        a.post(
          '/broken',
          guard(() => {
            throw new Error('account lookup failed');
          }),
          (_req, res) => {
            ran.push('broken');
            res.send('ran');
          },
        );
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  const keptIntents = async () =>
    Number((await app!.query<{ n: number | string }>('SELECT count(*) AS n FROM verify_kit_intents'))[0]!.n);

  /** What the user sends, what was kept and texted before and after: nothing is kept, texted or run. */
  async function expectNothingDone(send: () => Promise<{ status: number; body: string }>, status: number) {
    const intents = await keptIntents();
    const texts = (await app!.emulator.control.outbox()).length;
    const ranBefore = ran.length;
    const answer = await send();
    expect(answer.status).toBe(status);
    expect(await keptIntents()).toBe(intents);
    expect((await app!.emulator.control.outbox()).length).toBe(texts);
    expect(ran.length).toBe(ranBefore);
    return answer;
  }

  it('a page whose query names the account twice is refused with 400 and keeps nothing; with one account it asks', async () => {
    const user = await app!.agent().signIn('bind-twice-page');
    const refused = await expectNothingDone(() => user.request('/statements?account=acct-a&account=acct-b'), 400);
    expect(refused.body).toContain(englishMessages.errors.invalid_action_params);
    expect(app!.logs.some((line) => line.includes('names more than one resource'))).toBe(true);
    expect((await user.request('/statements?account=acct-a')).body).toContain('Confirm it’s you');
  });

  it('a form whose field names the account twice is refused with 400 and keeps nothing; a script’s gets the JSON error', async () => {
    const user = await app!.agent().signIn('bind-twice-form');
    const sameSite = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
    await expectNothingDone(
      () => user.postForm('/payees', 'account=acct-a&account=acct-b&iban=TWICE-1', sameSite),
      400,
    );
    const json = await expectNothingDone(
      () =>
        user.request('/transfers', {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json', origin: user.origin },
          body: '{"account":["acct-a","acct-b"]}',
        }),
      400,
    );
    expect(JSON.parse(json.body)).toMatchObject({ error: 'invalid_action_params' });
    expect((await user.postForm('/payees', 'account=acct-a&iban=ONCE-1', sameSite)).body).toContain('Confirm it’s you');
  });

  it('a field sent with brackets, read as an object (account[x]=1 in an extended form, a JSON body’s object), is refused with 400 and keeps nothing, as one sent twice', async () => {
    const user = await app!.agent().signIn('bind-object');
    const sameSite = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
    const refused = await expectNothingDone(
      () => user.postForm('/payees-extended', 'account[x]=acct-a&iban=OBJECT-1', sameSite),
      400,
    );
    expect(refused.body).toContain(englishMessages.errors.invalid_action_params);
    const json = await expectNothingDone(
      () =>
        user.request('/transfers', {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json', origin: user.origin },
          body: '{"account":{"x":"acct-a"}}',
        }),
      400,
    );
    expect(JSON.parse(json.body)).toMatchObject({ error: 'invalid_action_params' });
    expect(
      app!.logs.some((line) => line.includes('"level":"error"') && line.includes('bindTo returned an object')),
    ).toBe(false);
    const asked = await user.postForm('/payees-extended', 'account=acct-a&iban=ONCE-2', sameSite);
    expect(asked.body).toContain('Confirm it’s you');
  });

  it('a JSON body’s field sent as a number, true, false or null is refused with 400 and keeps nothing, as an object is', async () => {
    const user = await app!.agent().signIn('bind-json-scalar');
    for (const body of ['{"account":5}', '{"account":true}', '{"account":false}', '{"account":null}']) {
      const refused = await expectNothingDone(
        () =>
          user.request('/transfers', {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json', origin: user.origin },
            body,
          }),
        400,
      );
      expect(JSON.parse(refused.body), body).toMatchObject({ error: 'invalid_action_params' });
    }
    expect(app!.logs.some((line) => line.includes('"level":"error"') && line.includes('bindTo returned'))).toBe(false);
  });

  it('a bindTo that returns a number or an object fails closed (500, nothing kept or run), its log line naming the guard, what it returned and the fix, never the value', async () => {
    const user = await app!.agent().signIn('bind-junk');
    const sameSite = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
    for (const [path, kind] of [
      ['/numbered', 'a number'],
      ['/record', 'an object'],
    ] as const) {
      const failed = await expectNothingDone(() => user.postForm(path, 'account=4471&iban=JUNK-1', sameSite), 500);
      expect(failed.body).toContain(englishMessages.errors.hook_failed);
      expect(failed.body).not.toMatch(/\n\s+at /);
      const line = app!.logs.find((l) => l.includes('"level":"error"') && l.includes(`bindTo returned ${kind}`));
      expect(line).toContain("requireRecentVerification({ scope: 'payout' })");
      expect(line).toContain('String(req.params.account)');
      expect(line).not.toContain('4471');
    }
  });

  it('a bindTo returning a record that refers to itself fails closed as any object does, its log line naming the fix', async () => {
    const user = await app!.agent().signIn('bind-circular');
    const sameSite = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
    const namingTheFix = () =>
      app!.logs.filter((l) => l.includes('"level":"error"') && l.includes('bindTo returned an object')).length;
    const before = namingTheFix();
    const failed = await expectNothingDone(() => user.postForm('/circular', 'account=4472&iban=LOOP-1', sameSite), 500);
    expect(failed.body).toContain(englishMessages.errors.hook_failed);
    expect(namingTheFix()).toBe(before + 1);
    expect(app!.logs.some((l) => l.includes('circular structure'))).toBe(false);
  });

  it('a bindTo that throws still fails closed: 500, its error logged, nothing kept or run', async () => {
    const user = await app!.agent().signIn('bind-throws');
    const sameSite = { origin: user.origin, 'sec-fetch-site': 'same-origin' };
    const failed = await expectNothingDone(() => user.postForm('/broken', 'account=acct-a', sameSite), 500);
    expect(failed.body).not.toContain('account lookup failed');
    expect(app!.logs.some((line) => line.includes('"level":"error"') && line.includes('account lookup failed'))).toBe(
      true,
    );
  });
});
