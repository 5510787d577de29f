/**
 * An action whose start requires a step-up (`requireRecentVerification` on the action), on SQLite
 * and PostgreSQL: a start posted straight to the start route without a fresh grant of the scope,
 * made in this browser session, texts nothing, stores no attempt and spends no budget; it is kept
 * and the user is asked to confirm it's them, after which the kept start runs once. A grant of
 * another browser session, of another scope or past maxAge opens nothing, and neither does a restart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVerificationKit, KitError, KitErrorCode, type ActionDefinition } from '../../middleware/index.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import type { Agent } from '../support/agent.ts';
import { parseHandoffPage } from '../support/agent.ts';
import { describeEachAppStore } from '../support/app-stores.ts';
import { MOBILE_RETURN_URL, startTestApp, type TestApp } from '../support/app.ts';
import { GENEROUS_START_LIMITS } from '../support/limits.ts';
import { confirmForm, SCOPES, TEN_MINUTES } from '../support/step-up.ts';

const NEW_NUMBER = '+33612345678';

const changePhone: ActionDefinition<unknown> = {
  name: 'change_phone',
  operationSensitivity: 'sensitive',
  successPath: '/done/phone',
  destination: 'entered',
  proves: 'destination',
  requireRecentVerification: { scope: 'account', maxAge: TEN_MINUTES },
  fulfil: () => {},
};
/** A number another account holds: the action's own `prepare` refuses it, as the recipes advise. */
const TAKEN_NUMBER = '+33612345679';
/** How often each user's start reached `prepare`. */
const prepared = new Map<string, number>();
const changePhoneChecked: ActionDefinition<unknown> = {
  ...changePhone,
  name: 'change_phone_checked',
  prepare(req, { user }) {
    prepared.set(user.userRef, (prepared.get(user.userRef) ?? 0) + 1);
    if ((req.body as { phone?: unknown }).phone === TAKEN_NUMBER) {
      throw new KitError(KitErrorCode.InvalidActionParams, 'This number already has an account.');
    }
    return null;
  },
};
const ACCOUNT_SCOPE = {
  name: 'account',
  operationSensitivity: 'sensitive',
  label: 'change your phone number',
} as const;

describeEachAppStore('a start that requires a step-up', (_store, storeOptions) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      ...(await storeOptions()),
      kit: {
        actions: [changePhone, changePhoneChecked],
        scopes: [...SCOPES, ACCOUNT_SCOPE],
        // Four starts per user: two step-up verifications and two changes at most. A refused start
        // spends none (three refused starts that spent would leave too few for a step-up and a change).
        limits: { ...GENEROUS_START_LIMITS, perUser: { points: 4, durationSeconds: 3600 } },
      },
      ownRoutes: (express, kit) => {
        for (const scope of ['account', 'security']) {
          express.get(`/grant/${scope}`, kit.requireRecentVerification({ scope, maxAge: TEN_MINUTES }), (_req, res) => {
            res.type('html').send('<!doctype html><title>Granted</title><h1>granted</h1>');
          });
          express.post(
            `/grant/${scope}`,
            kit.requireRecentVerification({ scope, maxAge: TEN_MINUTES }),
            (_req, res) => {
              res.type('html').send('<!doctype html><title>Granted</title><h1>posted</h1>');
            },
          );
        }
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  const texts = async () => (await app.emulator.control.outbox()).length;

  /** Verifies from a "Confirm it's you" page and follows the landing; returns where it sent the user. */
  async function verifyFrom(user: Agent, html: string): Promise<string> {
    const form = confirmForm(html);
    const started = await user.start(form.action, { intent: form.intent });
    const landing = await user.request(await user.verifyOnHostedPage(started));
    expect(landing.status).toBe(303);
    return landing.location!;
  }

  /** A fresh grant of `scope` in this agent's browser session, through the real flow. */
  async function grant(user: Agent, scope: string): Promise<void> {
    const page = await user.request(`/grant/${scope}`);
    expect(page.body).toContain('Confirm it’s you');
    const back = await user.request(await verifyFrom(user, page.body));
    expect(back.body).toContain('granted');
  }

  /** A direct start of change_phone: refused (asked to confirm), nothing texted, no attempt stored. */
  async function expectRefused(user: Agent, extra: Record<string, string> = {}): Promise<void> {
    const [sent, attempts] = [await texts(), await app.attemptCount()];
    const answer = await user.tryStartWithNumber('change_phone', NEW_NUMBER, extra);
    expect(parseHandoffPage(answer.body)).toBeUndefined();
    expect(answer.body).toContain('Confirm it’s you');
    expect(confirmForm(answer.body).action).toBe('account');
    expect(await texts()).toBe(sent);
    expect(await app.attemptCount()).toBe(attempts);
  }

  it('a start posted without a grant texts nothing, stores no attempt and spends no budget: the user is asked to confirm it’s them', async () => {
    const mallory = await app.agent().signIn('stolen-session');
    for (let i = 0; i < 3; i += 1) await expectRefused(mallory);
    // The user's budget is all there: the step-up, then the change itself.
    await grant(mallory, 'account');
    const started = await mallory.startWithNumber('change_phone', NEW_NUMBER);
    expect((await app.emulator.control.outbox()).at(-1)?.to).toBe(NEW_NUMBER);
    expect((await app.attempt(started.sessionId))?.destination).toBe(NEW_NUMBER);
  });

  it('with a fresh grant of the scope in the same browser session, the start runs and texts the typed number', async () => {
    const alice = await app.agent().signIn('granted-here');
    await grant(alice, 'account');
    const sent = await texts();
    const started = await alice.startWithNumber('change_phone', NEW_NUMBER);
    expect(started.response.status).toBe(200);
    expect((await app.emulator.control.outbox()).slice(sent).map((m) => m.to)).toEqual([NEW_NUMBER]);
  });

  it('a kept start runs once after the user confirms it’s them: a second confirmation sends nothing', async () => {
    const bob = await app.agent().signIn('kept-start');
    const asked = await bob.tryStartWithNumber('change_phone', NEW_NUMBER);
    const confirmation = await bob.request(await verifyFrom(bob, asked.body));
    expect(confirmation.status).toBe(200);
    const intent = /name="_verify_kit_intent" value="([^"]+)"/.exec(confirmation.body)?.[1];
    expect(intent).toBeDefined();
    const sent = await texts();
    const ran = await bob.postStart({ _csrf: bob.csrf, _verify_kit_intent: intent! });
    expect(ran.status).toBe(200);
    expect(parseHandoffPage(ran.body)).toBeDefined();
    expect((await app.emulator.control.outbox()).slice(sent).map((m) => m.to)).toEqual([NEW_NUMBER]);
    const again = await bob.postStart({ _csrf: bob.csrf, _verify_kit_intent: intent! });
    expect(again.status).toBe(409);
    expect(await texts()).toBe(sent + 1);
  });

  it('a kept start confirmed past maxAge is kept anew and asked again; after the second verification only the new one runs, and the first confirmation texts nothing (409)', async () => {
    const kim = await app.agent().signIn('kept-start-late');
    const asked = await kim.tryStartWithNumber('change_phone', NEW_NUMBER);
    const form = confirmForm(asked.body);
    const started = await kim.start(form.action, { intent: form.intent });
    // Landed past maxAge, within the kept start's 15 minutes.
    await app.clock.shifted((TEN_MINUTES + 1) * 1000, async () => {
      const confirmation = await kim.request((await kim.request(await kim.verifyOnHostedPage(started))).location!);
      const first = /name="_verify_kit_intent" value="([^"]+)"/.exec(confirmation.body)![1]!;
      const askedAgain = await kim.postStart({ _csrf: kim.csrf, _verify_kit_intent: first });
      expect(askedAgain.status).toBe(403);
      const again = await kim.request(await verifyFrom(kim, askedAgain.body));
      const second = /name="_verify_kit_intent" value="([^"]+)"/.exec(again.body)![1]!;
      const sent = await texts();
      const ran = await kim.postStart({ _csrf: kim.csrf, _verify_kit_intent: second });
      expect(ran.status, ran.body.slice(0, 600)).toBe(200);
      expect(parseHandoffPage(ran.body)).toBeDefined();
      const replayed = await kim.postStart({ _csrf: kim.csrf, _verify_kit_intent: first });
      expect(replayed.status).toBe(409);
      expect((await app.emulator.control.outbox()).slice(sent).map((m) => m.to)).toEqual([NEW_NUMBER]);
    });
  });

  it('a confirmation naming another user’s kept start, an unknown id, an empty one or a list of ids is a 409 that texts and stores nothing; the kept start then runs once for its user, on a no-store handoff page whose CSP lets it post to the service only', async () => {
    const frank = await app.agent().signIn('kept-by-frank');
    const asked = await frank.tryStartWithNumber('change_phone', NEW_NUMBER);
    const confirmation = await frank.request(await verifyFrom(frank, asked.body));
    const intent = /name="_verify_kit_intent" value="([^"]+)"/.exec(confirmation.body)![1]!;
    // Another user, with a fresh grant of the scope of their own: the grant is not what refuses them.
    const grace = await app.agent().signIn('not-frank');
    await grant(grace, 'account');
    const [sent, attempts] = [await texts(), await app.attemptCount()];
    const field = (id: string) => `_verify_kit_intent=${encodeURIComponent(id)}`;
    const refused = [
      await grace.postStart({ _csrf: grace.csrf, _verify_kit_intent: intent }),
      await frank.postStart({ _csrf: frank.csrf, _verify_kit_intent: `${intent.slice(0, -2)}xx` }),
      await frank.postStart({ _csrf: frank.csrf, _verify_kit_intent: '' }),
      await frank.postStart(`_csrf=${encodeURIComponent(frank.csrf)}&${field(intent)}&${field(intent)}`),
    ];
    expect(refused.map((answer) => answer.status)).toEqual([409, 409, 409, 409]);
    expect(await texts()).toBe(sent);
    expect(await app.attemptCount()).toBe(attempts);
    const ran = await frank.postStart({ _csrf: frank.csrf, _verify_kit_intent: intent });
    expect(ran.status).toBe(200);
    const service = new URL(parseHandoffPage(ran.body)!.verifyUrl).origin;
    expect(service).toBe(new URL(app.emulator.url).origin);
    expect(ran.headers.get('cache-control')).toBe('no-store');
    expect(ran.headers.get('referrer-policy')).toBe('no-referrer');
    expect(ran.headers.get('content-security-policy')).toContain(
      `form-action ${service} ${new URL(app.returnUrl).origin};`,
    );
    expect((await app.emulator.control.outbox()).slice(sent).map((m) => m.to)).toEqual([NEW_NUMBER]);
  });

  it('an intent id no kit makes (a NUL byte, which PostgreSQL cannot take) is a 409 wherever it is named: the kept start’s confirmation, the step-up page, the scope’s start, a guarded form', async () => {
    const henry = await app.agent().signIn('odd-intent-ids');
    await grant(henry, 'account');
    const [sent, attempts] = [await texts(), await app.attemptCount()];
    for (const id of ['a\u0000b', `${'A'.repeat(42)}\u0000`]) {
      const answers = [
        await henry.postStart({ _csrf: henry.csrf, _verify_kit_intent: id }),
        await henry.request(`/verify/step-up?intent=${encodeURIComponent(id)}`),
        await henry.postStart({ _csrf: henry.csrf, action: 'account', intent: id }),
        await henry.postForm('/grant/account', { _csrf: henry.csrf, _verify_kit_intent: id }),
      ];
      expect(answers.map((answer) => answer.status)).toEqual([409, 409, 409, 409]);
    }
    expect(await texts()).toBe(sent);
    expect(await app.attemptCount()).toBe(attempts);
  });

  it('a start or a guarded form holding a NUL byte (in a value or a name, which PostgreSQL cannot keep) is a 400 (a typed number holding one: the number form, 422) that keeps, texts and stores nothing', async () => {
    const ivan = await app.agent().signIn('nul-in-form');
    const [sent, attempts] = [await texts(), await app.attemptCount()];
    const answers = [
      await ivan.tryStartWithNumber('change_phone', NEW_NUMBER, { note: 'a\u0000b' }),
      await ivan.tryStartWithNumber('change_phone', '+3361234\u00005678'),
      await ivan.tryStartWithNumber('change_phone', NEW_NUMBER, { 'n\u0000': 'x' }),
      await ivan.postForm(
        '/grant/account',
        { _csrf: ivan.csrf, note: 'a\u0000b' },
        { 'sec-fetch-site': 'same-origin' },
      ),
    ];
    // The number is no number at all: refused as one, before the step-up keeps anything.
    expect(answers.map((answer) => answer.status)).toEqual([400, 422, 400, 400]);
    for (const answer of answers) expect(answer.body).not.toContain('Confirm it’s you');
    expect(await texts()).toBe(sent);
    expect(await app.attemptCount()).toBe(attempts);
  });

  it('without a grant, a typed number that cannot be texted (junk, premium-rate) or a restart of nothing is refused at once: the number form (422) or a 400, nothing kept, nothing texted', async () => {
    const jo = await app.agent().signIn('junk-before-step-up');
    const kept = async () =>
      (await app.query('SELECT intent_id FROM verify_kit_intents WHERE user_ref = $1', ['user-junk-before-step-up']))
        .length;
    const [sent, attempts] = [await texts(), await app.attemptCount()];
    const answers = [
      await jo.tryStartWithNumber('change_phone', 'not a number'),
      await jo.tryStartWithNumber('change_phone', '+33899123456'),
      await jo.postStart({ _csrf: jo.csrf, action: 'change_phone', restart: 'A'.repeat(43) }),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([422, 422, 400]);
    for (const answer of answers) expect(answer.body).not.toContain('Confirm it’s you');
    expect(answers[0]!.body).toContain('name="phone"');
    expect(await kept()).toBe(0);
    expect(await texts()).toBe(sent);
    expect(await app.attemptCount()).toBe(attempts);
    // A number that can be texted is still kept and asked for, as before.
    await expectRefused(jo);
    expect(await kept()).toBe(1);
  });

  it('without a grant, a start its action’s prepare refuses (a number already taken) gets prepare’s own 400 at once: nothing kept, nothing texted; a start it accepts is kept, and prepare runs once per start that goes on', async () => {
    const kay = await app.agent().signIn('taken-before-step-up');
    const kept = async () =>
      (await app.query('SELECT intent_id FROM verify_kit_intents WHERE user_ref = $1', ['user-taken-before-step-up']))
        .length;
    const [sent, attempts] = [await texts(), await app.attemptCount()];
    const refused = await kay.tryStartWithNumber('change_phone_checked', TAKEN_NUMBER);
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('This number already has an account.');
    expect(refused.body).not.toContain('Confirm it’s you');
    expect(await kept()).toBe(0);
    expect(await texts()).toBe(sent);
    expect(await app.attemptCount()).toBe(attempts);
    // A number prepare accepts is kept and asked for; once granted, the kept start runs (prepare again, for the user as they are then).
    const asked = await kay.tryStartWithNumber('change_phone_checked', NEW_NUMBER);
    expect(asked.body).toContain('Confirm it’s you');
    expect(await kept()).toBe(1);
    await grant(kay, 'account');
    prepared.clear();
    await kay.startWithNumber('change_phone_checked', NEW_NUMBER);
    expect(prepared.get('user-taken-before-step-up')).toBe(1);
  });

  it('a grant made in another browser session of the same user opens nothing', async () => {
    const laptop = await app.agent().signIn('two-browsers');
    await grant(laptop, 'account');
    const thief = await app.agent().signIn('two-browsers');
    await expectRefused(thief);
  });

  it('a grant of another scope opens nothing', async () => {
    const carol = await app.agent().signIn('other-scope');
    await grant(carol, 'security');
    await expectRefused(carol);
  });

  it('a grant older than maxAge opens nothing', async () => {
    const dave = await app.agent().signIn('stale-grant');
    await grant(dave, 'account');
    await app.clock.shifted((TEN_MINUTES + 1) * 1000, () => expectRefused(dave));
  });

  it('a restart of a finished attempt is judged the same: without a fresh grant it is refused', async () => {
    const erin = await app.agent().signIn('restarted');
    await grant(erin, 'account');
    const started = await erin.startWithNumber('change_phone', NEW_NUMBER);
    await app.emulator.control.complete(started.sessionId, { outcome: 'failed', reason: 'otp_locked' });
    await erin.landFor(started.sessionId, started.state);
    await app.clock.shifted((TEN_MINUTES + 1) * 1000, async () => {
      const [sent, attempts] = [await texts(), await app.attemptCount()];
      const answer = await erin.postStart({ _csrf: erin.csrf, action: 'change_phone', restart: started.state });
      expect(parseHandoffPage(answer.body)).toBeUndefined();
      expect(answer.body).toContain('Confirm it’s you');
      expect(await texts()).toBe(sent);
      expect(await app.attemptCount()).toBe(attempts);
    });
  });
});

describe('requireRecentVerification on an action, checked when the kit is created', () => {
  const store = createSqliteStore({ database: ':memory:' });
  afterAll(async () => {
    await store.close();
  });
  const base = {
    baseUrl: 'http://127.0.0.1:1',
    clientId: 'client-a',
    clientSecret: 'a-secret-of-at-least-32-characters-long!!',
    store,
    resolveUser: () => null,
    dangerouslyDisableStartLimits: true,
  };
  const problemsOf = (options: Record<string, unknown>): string => {
    try {
      createVerificationKit({ ...base, returnUrl: 'http://localhost:3000/verify/return', ...options } as never);
    } catch (error) {
      return (error as Error).message;
    }
    return '';
  };

  it('a mobile kit refuses it, naming the fix: a grant is bound to a browser session', () => {
    const message = problemsOf({ platform: 'mobile', returnUrl: MOBILE_RETURN_URL, actions: [changePhone] });
    expect(message).toContain('`actions[0] ("change_phone").requireRecentVerification` needs platform \'web\'');
    expect(message).toContain('prepare');
  });

  it('a scope not declared, a bad maxAge or another key are each reported', () => {
    const message = problemsOf({
      actions: [{ ...changePhone, requireRecentVerification: { scope: 'acount', maxAge: 0, bindTo: () => '' } }],
    });
    expect(message).toContain(
      '`actions[0] ("change_phone").requireRecentVerification.scope` must name a scope declared in createVerificationKit\'s `scopes` option (none is declared): got "acount".',
    );
    expect(message).toContain('`actions[0] ("change_phone").requireRecentVerification.maxAge` must be a whole number');
    expect(message).toContain('`actions[0] ("change_phone").requireRecentVerification.bindTo` is not an option');
  });

  it("a sweep job's kit (no start route, so no scopes) takes the app's actions as they are, step-ups included", () => {
    expect(problemsOf({ actions: [changePhone], routes: { start: false, landing: false } })).toBe('');
  });
});
