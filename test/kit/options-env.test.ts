/**
 * `verifyOptionsFromEnv()`: the service's connection options from VERIFY_* variables in one call;
 * every missing variable is named at once, and a secret's value never appears in the error.
 */
import { describe, expect, it } from 'vitest';
import { createVerificationKit, verifyOptionsFromEnv } from '../../middleware/index.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';

describe('verifyOptionsFromEnv', () => {
  it('reads the four VERIFY_* variables into the options createVerificationKit takes', async () => {
    const options = verifyOptionsFromEnv({
      VERIFY_BASE_URL: 'https://verify.example.com',
      VERIFY_CLIENT_ID: 'shop',
      VERIFY_CLIENT_SECRET: 'shop-secret-0123456789',
      VERIFY_RETURN_URL: 'https://shop.example/verify/return',
    });
    expect(options).toEqual({
      baseUrl: 'https://verify.example.com',
      clientId: 'shop',
      clientSecret: 'shop-secret-0123456789',
      returnUrl: 'https://shop.example/verify/return',
    });
    const kit = createVerificationKit({
      ...options,
      store: createSqliteStore({ database: ':memory:' }),
      resolveUser: () => null,
      actions: [{ name: 'a', operationSensitivity: 'normal', successPath: '/', fulfil: () => {} }],
    });
    await kit.close();
  });

  it('names every missing or empty variable in one invalid_options error, without echoing the secret', () => {
    const secret = 'a-secret-that-must-not-show';
    let message = '';
    try {
      verifyOptionsFromEnv({ VERIFY_CLIENT_ID: ' ', VERIFY_CLIENT_SECRET: secret });
    } catch (error) {
      expect(error).toMatchObject({ code: 'invalid_options' });
      message = (error as Error).message;
    }
    expect(message).toContain('VERIFY_BASE_URL is not set');
    expect(message).toContain('VERIFY_CLIENT_ID is not set');
    expect(message).toContain('VERIFY_RETURN_URL is not set');
    expect(message).not.toContain('VERIFY_CLIENT_SECRET is not set');
    expect(message).not.toContain(secret);
  });
});
