/**
 * The client secret appears only in the Authorization header: a misconfigured `baseUrl` that
 * carries it (as userinfo, in the path, in the query; with a `/`, common in base64 secrets, which
 * no userinfo pattern strips) gets an `invalid_options` message naming the fix and never the
 * secret, in any form (as written, JSON-escaped, percent-encoded, base64), from
 * createVerificationKit and from createVerifyClient. A URL that does not parse is never quoted.
 */
import { describe, expect, it } from 'vitest';
import {
  createVerificationKit,
  createVerifyClient,
  KitErrorCode,
  type VerificationKitOptions,
} from '../../middleware/index.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';

/** Every form a message could carry the secret in. */
function forms(secret: string): string[] {
  return [
    secret,
    JSON.stringify(secret).slice(1, -1),
    encodeURIComponent(secret),
    encodeURI(secret),
    Buffer.from(secret).toString('base64'),
  ];
}

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

const SECRETS = ['Zm9v/YmFyK2Jheg==', 'ab"cd\\ef/gh@ij', 'plain-secret-0123'];
/** baseUrl mistakes that carry the secret: userinfo (not parsing, or parsing), path, query, plain http. */
const baseUrlsWith = (secret: string) => [
  `https://client:${secret}@verify.example.com`,
  `https://${secret}@verify.example.com`,
  `http://verify.example.com/${secret}`,
  `https://verify.example.com/v1?secret=${secret}`,
  `https://verify.example.com/v1#${encodeURIComponent(secret)}`,
  `verify.example.com/${secret}`,
];

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
