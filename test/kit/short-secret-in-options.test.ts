/**
 * The client secret never appears in an error, at any length: a secret too short to accept is
 * refused without being remembered as a secret, and the same invalid_options message, refusing
 * another option that carries it (a Basic pair given as clientId, a query), does not quote it.
 */
import { describe, expect, it } from 'vitest';
import { createVerificationKit, createVerifyClient, type VerificationKitOptions } from '../../middleware/index.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';

function options(over: Partial<VerificationKitOptions<unknown>>): VerificationKitOptions<unknown> {
  return {
    baseUrl: 'https://verify.example.com',
    clientId: 'app',
    clientSecret: 'x'.repeat(40),
    returnUrl: 'https://app.example.com/verify/return',
    store: createSqliteStore({ database: ':memory:' }),
    actions: [{ name: 'grant', operationSensitivity: 'normal', successPath: '/', fulfil: () => {} }],
    resolveUser: () => null,
    ...over,
  };
}

function messageOf(make: () => unknown): string {
  try {
    make();
  } catch (error) {
    return (error as Error).message;
  }
  return '';
}

describe('a short client secret echoed through another option', () => {
  it('clientId given as the Basic pair "id:secret" with a 9-character secret', () => {
    const secret = 'Sh0rtS3c!';
    const message = messageOf(() =>
      createVerificationKit(options({ clientId: `app:${secret}`, clientSecret: secret })),
    );
    expect(message).toContain('clientSecret');
    expect(message, message).not.toContain(secret);
  });
  it('returnUrl query carrying a 9-character secret', () => {
    const secret = 'Sh0rtS3c!';
    const message = messageOf(() =>
      createVerificationKit(
        options({ returnUrl: `https://app.example.com/verify/return?s=${secret}`, clientSecret: secret }),
      ),
    );
    expect(message).toContain('clientSecret');
    expect(message, message).not.toContain(secret);
  });
  it('createVerifyClient: clientId given as the Basic pair with a 9-character secret', () => {
    const secret = 'Sh0rtS3c!';
    const message = messageOf(() =>
      createVerifyClient({ baseUrl: 'https://verify.example.com', clientId: `app:${secret}`, clientSecret: secret }),
    );
    expect(message).toContain('clientSecret');
    expect(message, message).not.toContain(secret);
  });
  // A long clientId quoting the pair is cut at 200 characters: on the secret's last character.
  const cutOnTheSecret = `${'a'.repeat(191)}:Sh0rtS3c!`;
  it('a clientId cut where it quotes the secret: no start of it left at the cut (createVerificationKit)', () => {
    const message = messageOf(() =>
      createVerificationKit(options({ clientId: cutOnTheSecret, clientSecret: 'Sh0rtS3c!' })),
    );
    expect(message).toContain('clientSecret');
    expect(message, message).not.toContain('Sh0rt');
  });
  it('the same (createVerifyClient)', () => {
    const message = messageOf(() =>
      createVerifyClient({
        baseUrl: 'https://verify.example.com',
        clientId: cutOnTheSecret,
        clientSecret: 'Sh0rtS3c!',
      }),
    );
    expect(message).toContain('clientSecret');
    expect(message, message).not.toContain('Sh0rt');
  });
});
