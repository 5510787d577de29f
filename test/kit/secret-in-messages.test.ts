/**
 * The client secret appears only in the Authorization header: a misconfigured `baseUrl` that
 * carries it (as userinfo, in the path, in the query; with a `/`, common in base64 secrets, which
 * no userinfo pattern strips) gets an `invalid_options` message naming the fix and never the
 * secret, in any form (as written, JSON-escaped, percent-encoded as a URL component, a whole URL,
 * a form body or a URL's userinfo, base64), from createVerificationKit and from createVerifyClient.
 * A URL that does not parse is never quoted. An integrator's error quoting the Basic header it sent,
 * or the secret in a form body, a URL's userinfo, hex, HTML or URL-encoded base64, is logged
 * without what encodes the secret; a value is redacted before it is cut, so no part of the secret
 * survives the cut. At the edges of redaction: a baseUrl's query is never quoted (the secret there
 * with lower-case percent escapes is not shown either), a clientSecret too short to be told from
 * ordinary text or recognised in base64 at every offset is refused, and the fix line for a 401 quotes neither credential (read the wrong
 * way round, clientId holds the secret).
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createVerificationKit,
  createVerifyClient,
  KitErrorCode,
  runSweepJob,
  type VerificationKitOptions,
  type VerifyClient,
} from '../../middleware/index.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { startTestEmulator, type TestEmulator } from '../support/emulator.ts';
import { appOnStubService } from '../support/stub-service.ts';

/** The secret as a URL's password spells it (`+` kept, `=` and `/` escaped). */
function asUserinfo(secret: string): string {
  const url = new URL('https://verify.example.com');
  url.password = secret;
  return url.password;
}

/** The secret as a form body spells it (URLSearchParams, an HTML form, an OAuth token request). */
const formEncoded = (secret: string) => new URLSearchParams({ s: secret }).toString().slice(2);

/** Every form a message could carry the secret in. */
function forms(secret: string): string[] {
  return [
    secret,
    JSON.stringify(secret).slice(1, -1),
    encodeURIComponent(secret),
    encodeURI(secret),
    formEncoded(secret),
    asUserinfo(secret),
    Buffer.from(secret).toString('base64'),
    encodeURIComponent(Buffer.from(secret).toString('base64')),
    Buffer.from(secret).toString('hex'),
    Buffer.from(secret).toString('hex').toUpperCase(),
    htmlEscaped(secret),
  ];
}

/** The secret as an HTML page escapes it. */
const htmlEscaped = (secret: string) =>
  secret.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll("'", '&#39;');

/** The message of what `make` throws; fails unless it is invalid_options. */
function messageOf(make: () => unknown): string {
  try {
    make();
  } catch (error) {
    expect(error).toMatchObject({ code: KitErrorCode.InvalidOptions });
    return (error as Error).message;
  }
  throw new Error('expected invalid_options');
}

// With punctuation a form body or a URL's userinfo spells differently from every other encoding.
const SECRETS = [
  'Zm9v/YmFyK2Jheg==',
  'ab"cd\\ef/gh@ij',
  'plain-secret-0123',
  "Qx7!mZp~2vK(9rT)wL'4nB8sYd",
  'kX3r+Vq9Lm2+Tz8pWd4sNa==',
];
/** baseUrl mistakes that carry the secret: userinfo (not parsing, or parsing), path, query, plain http. */
const baseUrlsWith = (secret: string) => [
  `https://client:${secret}@verify.example.com`,
  `https://${secret}@verify.example.com`,
  `http://verify.example.com/${secret}`,
  `https://verify.example.com/v1?secret=${secret}`,
  `https://verify.example.com/v1#${encodeURIComponent(secret)}`,
  `verify.example.com/${secret}`,
  // What the URL parser also reads as userinfo: no slashes after the scheme, a leading space.
  `https:client:${secret}@verify.example.com`,
  ` https://client:${secret}@verify.example.com`,
  `https://verify.example.com/v1?${new URLSearchParams({ client_secret: secret }).toString()}`,
  withPassword('https://verify.example.com/v1', secret),
];

function withPassword(href: string, secret: string): string {
  const url = new URL(href);
  url.username = 'client';
  url.password = secret;
  return url.href;
}

function kitOptions(baseUrl: string, clientSecret: string): VerificationKitOptions<unknown> {
  return {
    baseUrl,
    clientId: 'client',
    clientSecret,
    returnUrl: 'https://app.example.com/verify/return',
    store: createSqliteStore({ database: ':memory:' }),
    actions: [{ name: 'grant', operationSensitivity: 'normal', successPath: '/', fulfil: () => {} }],
    resolveUser: () => null,
  };
}

describe('a baseUrl carrying the client secret', () => {
  it('createVerificationKit says what is wrong with baseUrl, never quoting the secret in any form', () => {
    for (const secret of SECRETS) {
      for (const baseUrl of baseUrlsWith(secret)) {
        const message = messageOf(() => createVerificationKit(kitOptions(baseUrl, secret)));
        expect(message, baseUrl).toContain('`baseUrl`');
        for (const form of forms(secret)) expect(message, `${baseUrl} -> ${message}`).not.toContain(form);
      }
    }
  });

  it('createVerifyClient the same', () => {
    for (const secret of SECRETS) {
      for (const baseUrl of baseUrlsWith(secret)) {
        const message = messageOf(() => createVerifyClient({ baseUrl, clientId: 'client', clientSecret: secret }));
        expect(message, baseUrl).toContain('`baseUrl`');
        for (const form of forms(secret)) expect(message, `${baseUrl} -> ${message}`).not.toContain(form);
      }
    }
  });

  it('a baseUrl that does not parse is described, never echoed', () => {
    const message = messageOf(() =>
      createVerificationKit(kitOptions('https://client:Zm9v/YmFyK2Jheg==@verify.acme.test', 'other-secret')),
    );
    expect(message).toContain('`baseUrl` must be an absolute URL');
    expect(message).not.toContain('Zm9v');
    expect(message).not.toContain('acme');
  });
});

describe("the client's credentials in the log lines of a failed or refused call", () => {
  let app: TestApp | undefined;
  let emulator: TestEmulator | undefined;
  afterEach(async () => {
    await app?.close();
    await emulator?.close();
    app = undefined;
    emulator = undefined;
  });

  // `id:` of 5 and 7 characters: the secret's bytes start one and two bytes into a base64 group,
  // so its own base64 is no part of the header's.
  it.each(['acme', 'acme-x'])(
    'is logged, and its page shown, without the secret (client id %s): what encodes the secret is removed',
    async (clientId) => {
      const secret = `kit-secret-${randomBytes(16).toString('hex')}`;
      const basic = Buffer.from(`${clientId}:${secret}`).toString('base64');
      app = await startTestApp({
        service: async (returnUrl) => {
          emulator = await startTestEmulator({ clients: [{ clientId, secret, returnUrl, platform: 'web' }] });
          return { baseUrl: emulator.url, clientId, clientSecret: secret };
        },
        kit: {
          actions: [
            {
              name: 'grant_badge',
              operationSensitivity: 'normal',
              successPath: '/done',
              // The app's own call to the service failed, and its error quotes the header it sent.
              prepare: () => {
                throw new Error(`the service refused Authorization: Basic ${basic}`);
              },
              fulfil: () => {},
            },
          ],
        },
      });
      const alice = await app.agent().signIn('alice');
      const answer = await alice.tryStart('grant_badge');
      expect(answer.status).toBe(500);
      const logged = app.logs.filter((line) => line.includes('the service refused'));
      expect(logged.length).toBeGreaterThan(0);
      // Past its first group and short of its last, the value encodes the secret's bytes alone.
      const secretPart = basic.slice(8, -4);
      for (const text of [...logged, answer.body]) expect(text).not.toContain(secretPart);
    },
  );

  it('never shows the issued secret when the app swapped clientId and clientSecret (the usual cause of a 401)', async () => {
    const issuedId = 'acme-app-production';
    const issuedSecret = `kit-secret-${randomBytes(16).toString('hex')}`;
    app = await startTestApp({
      service: async (returnUrl) => {
        emulator = await startTestEmulator({
          clients: [{ clientId: issuedId, secret: issuedSecret, returnUrl, platform: 'web' }],
        });
        // The mistake: VERIFY_CLIENT_ID and VERIFY_CLIENT_SECRET read the wrong way round.
        return { baseUrl: emulator.url, clientId: issuedSecret, clientSecret: issuedId };
      },
    });
    const alice = await app.agent().signIn('alice');
    const answer = await alice.tryStart('grant_badge');
    expect(answer.status).toBe(502);
    const refusal = app.logs.filter((line) => line.includes('refused the client credentials'));
    expect(refusal.length).toBeGreaterThan(0);
    for (const line of refusal) expect(line, line).not.toContain(issuedSecret);
  });
});

describe('a service answer that echoes the Authorization header', () => {
  const startApp = appOnStubService();

  it('is logged and answered without the secret: the errorCode field is redacted as the message is', async () => {
    const clientId = 'acme';
    const secret = `kit-secret-${randomBytes(16).toString('hex')}`;
    // A proxy in front of the service refusing the call, quoting what it was sent.
    const app = await startApp(
      (req, res) => {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ isSuccess: false, errorCode: `unauthorized: ${req.headers.authorization ?? ''}` }));
      },
      { clientId, clientSecret: secret },
    );
    const alice = await app.agent().signIn('alice');
    const answer = await alice.tryStart('grant_badge');
    expect(answer.status).toBe(502);
    const logged = app.logs.filter((line) => line.includes('unauthorized'));
    expect(logged.length).toBeGreaterThan(0);
    const basic = Buffer.from(`${clientId}:${secret}`).toString('base64');
    for (const text of [...logged, answer.body, ...app.errors]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(basic.slice(8, -4));
    }
  });
});

describe('a service answer that echoes the Authorization header cut short', () => {
  const startApp = appOnStubService();

  it('is logged and answered with no fragment of the secret: what the cut left of it is redacted too', async () => {
    const clientId = 'acme';
    const secret = `kit-secret-${randomBytes(16).toString('hex')}`;
    const basic = Buffer.from(`${clientId}:${secret}`).toString('base64');
    // A proxy refusing the call, quoting the start of what it was sent and of the secret itself.
    const app = await startApp(
      (req, res) => {
        const authorization = req.headers.authorization ?? '';
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            isSuccess: false,
            errorCode: `unauthorized: ${authorization.slice(0, 40)}... (client secret starts ${secret.slice(0, 24)}...)`,
          }),
        );
      },
      { clientId, clientSecret: secret },
    );
    const alice = await app.agent().signIn('alice');
    const answer = await alice.tryStart('grant_badge');
    expect(answer.status).toBe(502);
    const logged = app.logs.filter((line) => line.includes('unauthorized'));
    expect(logged.length).toBeGreaterThan(0);
    // The base64 characters that encode the secret's bytes alone (after "acme:"), and its own characters.
    const ofSecret = [basic.slice(8, 34), secret.slice(0, 24)];
    for (const text of [...logged, answer.body, ...app.errors]) {
      for (const part of ofSecret) {
        for (let at = 0; at + 8 <= part.length; at++) expect(text).not.toContain(part.slice(at, at + 8));
      }
    }
  });
});

describe('a value cut inside the client secret', () => {
  const secret = 'sk_live_7Hq2WmX9pL4vR8tY3nB6cJ1dF5gK0zA2';

  it('an option quoted in a message is redacted before it is cut: no prefix of the secret is left', () => {
    // The secret starts 24 characters before the 200 at which a quoted value is cut.
    const head = `https://app.example.com/${'a'.repeat(123)}/verify/return?client_secret=`;
    expect(head.length).toBe(176);
    const message = messageOf(() =>
      createVerificationKit({ ...kitOptions('https://verify.example.com', secret), returnUrl: `${head}${secret}` }),
    );
    expect(message).toContain('`returnUrl`');
    expect(message, message).not.toContain(secret.slice(0, 16));
  });

  it("a successPath function's wrong answer is logged redacted before it is cut", async () => {
    let kitSecret = '';
    const app = await startTestApp({
      kit: {
        actions: [
          {
            name: 'grant_badge',
            operationSensitivity: 'normal',
            // A mistake: an absolute URL to a partner that authenticates with the client's credentials.
            successPath: () => `https://partner.example/cb?client_id=acme&client_secret=${kitSecret}`,
            fulfil: () => {},
          },
        ],
      },
    });
    kitSecret = app.secret;
    try {
      const alice = await app.agent().signIn('alice');
      const started = await alice.start('grant_badge');
      await alice.request(await alice.verifyOnHostedPage(started));
      const logged = app.logs.filter((line) => line.includes('successPath returned'));
      expect(logged.length).toBeGreaterThan(0);
      for (const line of logged) expect(line, line).not.toContain(app.secret.slice(0, 12));
    } finally {
      await app.close();
    }
  });

  it("an integrator's error quoting the secret cut short is logged with no part of it", async () => {
    let kitSecret = '';
    const app = await startTestApp({
      kit: {
        // An HTTP library's error quoting the first characters of the credentials it sent.
        beforeCreate: () => {
          throw new Error(`partner refused client_secret=${kitSecret.slice(0, 20)}... (truncated)`);
        },
      },
    });
    kitSecret = app.secret;
    try {
      const alice = await app.agent().signIn('alice');
      expect((await alice.tryStart('grant_badge')).status).toBe(500);
      const logged = app.logs.filter((line) => line.includes('partner refused'));
      expect(logged.length).toBeGreaterThan(0);
      for (const line of logged) expect(line, line).not.toContain(app.secret.slice(0, 8));
    } finally {
      await app.close();
    }
  });
});

describe("an integrator's error quoting the secret as a form body, a URL's userinfo, hex, HTML or URL-encoded base64", () => {
  // Its own secret: the kit redacts every secret it was given, and another one's part would hide a leak.
  // `>??` puts a `/` inside its base64, which percent-encoding spells `%2F`.
  const secret = "Vd3!qLp~8s>??R(2wT)nK'6mB4xYc+j=";

  it.each([
    ['a form body', `token request failed: grant_type=client_credentials&client_secret=${formEncoded(secret)}`],
    ['a URL with credentials', `cannot fetch https://acme:${asUserinfo(secret)}@verify.example.com/session`],
    ['hex', `signing key mismatch: ${Buffer.from(secret).toString('hex')}`],
    ['upper-case hex', `signing key in upper case: ${Buffer.from(secret).toString('hex').toUpperCase()}`],
    ['HTML-escaped', `<input value="${htmlEscaped(secret)}"> was rejected`],
    ['URL-encoded base64', `GET /debug?auth=${encodeURIComponent(Buffer.from(secret).toString('base64'))} failed`],
  ])('is logged without it: %s', async (_spelling, text) => {
    const client: VerifyClient = {
      createSession: () => Promise.reject(new Error(text)),
      getSession: () => Promise.reject(new Error('unused')),
      close: async () => {},
    };
    const app = await startTestApp({
      service: async () => ({ baseUrl: 'https://verify.example.com', clientId: 'acme', clientSecret: secret }),
      wrapClient: () => client,
    });
    try {
      const answer = await (await app.agent().signIn('alice')).tryStart('grant_badge');
      expect(answer.status).toBeGreaterThanOrEqual(500);
      const logged = app.logs.filter((line) => line.includes(text.slice(0, 12)));
      expect(logged.length).toBeGreaterThan(0);
      for (const line of logged) for (const form of forms(secret)) expect(line, line).not.toContain(form);
    } finally {
      await app.close();
    }
  });

  it("the sweep job's line for a configuration error quoting the environment's secret form-encoded", async () => {
    const lines: string[] = [];
    const code = await runSweepJob({
      argv: ['--once'],
      env: { VERIFY_CLIENT_SECRET: secret },
      handleSignals: false,
      print: (line) => lines.push(line),
      kit: (env) => {
        throw new Error(`could not fetch a token: client_secret=${formEncoded(env.VERIFY_CLIENT_SECRET ?? '')}`);
      },
    });
    expect(code).toBe(1);
    expect(lines.join('\n')).toContain('could not fetch a token');
    for (const line of lines) for (const form of forms(secret)) expect(line, line).not.toContain(form);
  });
});

describe('the client secret in an invalid_options message', () => {
  it('is not shown from a baseUrl carrying it percent-encoded with lower-case hex (%2f, %2b, %3d)', () => {
    const secret = 'Zm9v/YmFyK2Jhei1xdXV4+c2VjcmV0==';
    // .NET's HttpUtility.UrlEncode (and other encoders) write lower-case hex digits.
    const lower = encodeURIComponent(secret).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());
    const message = messageOf(() =>
      createVerificationKit(kitOptions(`https://verify.example.com/v1?client_secret=${lower}`, secret)),
    );
    expect(message).toContain('`baseUrl`');
    expect(message, message).not.toContain(lower);
  });

  it('is not shown from a clientId holding the Basic pair "id:secret" (the secret option forgotten), nor from one with control characters', () => {
    const secret = 'Zq8sLw3PmT9vXk2RbN7c';
    for (const clientId of [`shop:${secret}`, `shop\n${secret}`]) {
      const fromKit = messageOf(() =>
        createVerificationKit({ ...kitOptions('https://verify.example.com', ''), clientId }),
      );
      const fromClient = messageOf(() =>
        createVerifyClient({ baseUrl: 'https://verify.example.com', clientId, clientSecret: '' }),
      );
      for (const message of [fromKit, fromClient]) {
        expect(message).toMatch(
          /`clientId` (must be the client id issued by the portal, without ":"|contains control)/,
        );
        for (const form of forms(secret)) expect(message, message).not.toContain(form);
        expect(message, message).not.toContain(secret.slice(0, 8));
      }
    }
  });

  it('is not shown from a baseUrl when shorter than 10 characters, and such a clientSecret is refused', () => {
    const secret = 'Q7z+pL4';
    const message = messageOf(() =>
      createVerificationKit(kitOptions(`https://verify.example.com/v1?client_secret=${secret}`, secret)),
    );
    expect(message).toContain('`baseUrl`');
    expect(message).toContain('`clientSecret` is shorter than 10 characters');
    expect(message, message).not.toContain(`client_secret=${secret}`);
  });
});
