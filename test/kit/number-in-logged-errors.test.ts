/**
 * An error of the integrator's code naming a phone number ("no account for +15550001111", "user
 * 07400 123456 not found") is logged with the number masked, as everywhere but the form it was
 * typed into: the kit logs what a `fulfil` or a `successPath` throws, and logs are no such form.
 * What is no number (an address and its port, a count, a duration) stays readable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActionDefinition } from '../../middleware/index.ts';
import { createConsoleLogger, describeError } from '../../middleware/logger.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { newSeen } from '../support/seen.ts';
import { USERS } from '../support/users.ts';

const alice = USERS.alice!;

const actions: ActionDefinition<unknown>[] = [
  {
    name: 'link_payout',
    operationSensitivity: 'normal',
    successPath: '/done/payout',
    fulfil: () => {
      throw new Error(`no payout account for ${alice.destination}`);
    },
  },
  {
    name: 'open_profile',
    operationSensitivity: 'normal',
    successPath: () => {
      throw new Error('user 07400 123456 not found');
    },
    fulfil: () => undefined,
  },
];

let app: TestApp;
const seen = newSeen();
beforeAll(async () => {
  app = await startTestApp({ kit: { actions } });
});
afterAll(async () => {
  await app?.close();
});

/** The messages of the errors logged for the session. */
function loggedMessages(sessionId: string): unknown[] {
  return app.logs
    .map((line) => JSON.parse(line) as { sessionId?: string; err?: { message?: unknown } })
    .filter((line) => line.sessionId === sessionId && line.err !== undefined)
    .map((line) => line.err?.message);
}

describe("an error of the integrator's code naming a phone number, logged by the kit", () => {
  it('a fulfil that throws naming the user\'s number: logged with it masked ("•• 11")', async () => {
    const user = await app.agent(seen).signIn('alice');
    await user.start('link_payout');
    const row = await app.latestAttempt();
    await app.emulator.control.complete(row.sessionId, { outcome: 'verified' });
    expect((await user.landFor(row.sessionId, row.state)).status).toBe(500);

    expect(loggedMessages(row.sessionId)).toEqual(['no payout account for ••\u00a011']);
    for (const line of app.logs) expect(line).not.toContain(alice.destination.slice(2));
  });

  it('a successPath that throws naming a national number in groups: logged with it masked', async () => {
    const user = await app.agent(seen).signIn('alice');
    const handoff = await user.start('open_profile');
    const { sessionId } = await app.latestAttempt();
    const location = await user.verifyOnHostedPage({ ...handoff, sessionId });
    expect((await user.request(location)).headers.get('location')).toBeNull();

    expect(loggedMessages(sessionId)).toEqual(['user ••\u00a056 not found']);
    for (const line of app.logs) expect(line).not.toMatch(/07400|123456/);
  });
});

describe('describeError: a number is masked wherever the message puts it', () => {
  const digits = alice.destination.slice(1);
  it.each([
    ['in a URL path', `GET https://crm.example.com/users/${alice.destination} answered 404`],
    ['a plus percent-encoded in a query', `GET https://crm.example.com/users?phone=%2B${digits} answered 404`],
    ['a query value followed by &', `GET https://crm.example.com/users?phone=${digits}&region=us answered 404`],
    ['glued to a word of a script written without spaces', `手机号${digits}未注册`],
    ['after #', `no payout account for customer #${digits}`],
  ])('%s', (_where, message) => {
    const logged = String(describeError(new Error(message)).message);
    expect(logged).toContain('••\u00a011');
    expect(logged).not.toContain(digits);
  });

  // As encodeURIComponent and URLSearchParams write "+44 7400 123456": the groups' spaces as %20.
  it.each([
    [
      'in a query, its groups percent-encoded',
      `GET https://crm.example/users?phone=${encodeURIComponent('+44 7400 123456')} answered 404`,
    ],
    ['national, in a query', `GET https://crm.example/users?phone=${encodeURIComponent('07400 123456')} answered 404`],
    [
      'in a path part, then an encoded space',
      `GET https://crm.example/users/${encodeURIComponent('+44 7400 123456 ')}x answered 404`,
    ],
    [
      'the whole query encoded',
      `GET https://crm.example/users?q=${encodeURIComponent('phone=+44 (7400) 123-456')} answered 404`,
    ],
  ])('%s', (_where, message) => {
    const logged = String(describeError(new Error(message)).message);
    expect(logged).toContain('••\u00a056');
    expect(decodeURIComponent(logged.replace(/%(?![0-9A-F]{2})/gi, '%25')), logged).not.toMatch(/7400\D*123/);
  });
});

describe('describeError: what is no phone number stays readable', () => {
  for (const message of [
    'connect ECONNREFUSED 127.0.0.1:5432',
    'connect ECONNREFUSED ::1:5432; connect ECONNREFUSED 10.20.30.40:5432',
    'gave up after 3 retries in 120000 ms',
    'order 123456 not found',
    'GET /files/report%20final.pdf?v=2%2B1 answered 404',
  ]) {
    it(message, () => {
      expect(describeError(new Error(message))).toEqual({ name: 'Error', message });
    });
  }

  it('a non-Error thrown, and an AggregateError of empty message, are masked too', () => {
    expect(describeError('no page for +44 7400 123456')).toEqual({ message: 'no page for ••\u00a056' });
    const gathered = Object.assign(new AggregateError([new Error('user (020) 7946-0958 locked')], ''), {
      code: 'E_USERS',
    });
    expect(describeError(gathered).message).toBe('E_USERS: user ••\u00a058 locked');
  });
});

describe('masking leaves a secret whole for the redaction that knows it', () => {
  // Secrets of the environment the kit was never given: only the line's redaction knows them.
  const secrets = [
    ['an API key', 'sk_AbCd1234567EfGhIjKlMnOpQrSt'],
    ['hex', '3f9a0c12458877e9d2c1b0a9f8e7d6c5'],
    ['base64 with "/" and "+"', 'q7/1234567+Zx9PqRsTuVwXyZaBcD'],
  ];

  for (const [kind, secret] of secrets) {
    it(`the default logger's line shows no part of a secret (${kind}) with seven digits in a row`, () => {
      const lines: string[] = [];
      const logger = createConsoleLogger((_level, line) => lines.push(line), { DATABASE_PASSWORD: secret });
      logger.error({ err: describeError(new Error(`login failed for app (password ${secret})`)) }, 'store failed');
      expect(lines).toEqual([
        '[verify-kit] ERROR store failed err.name=Error err.message="login failed for app (password [redacted])"',
      ]);
    });
  }
});
