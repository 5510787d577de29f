/**
 * The client secret appears only in the Authorization header, at the edges of redaction too: a
 * baseUrl's query is never quoted (the secret there percent-encoded with lower-case hex digits is
 * not shown either), a clientSecret too short to be told from ordinary text is refused, and the
 * fix line for a 401 quotes neither credential (read the wrong way round, clientId holds the secret).
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createVerificationKit, KitErrorCode, type VerificationKitOptions } from '../../middleware/index.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { startTestEmulator, type TestEmulator } from '../support/emulator.ts';

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

function messageOf(make: () => unknown): string {
  try {
    make();
  } catch (error) {
    expect(error).toMatchObject({ code: KitErrorCode.InvalidOptions });
    return (error as Error).message;
  }
  throw new Error('expected invalid_options');
}

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

  it('is not shown from a baseUrl when shorter than 4 characters, and such a clientSecret is refused', () => {
    const secret = 'Q7z';
    const message = messageOf(() =>
      createVerificationKit(kitOptions(`https://verify.example.com/v1?client_secret=${secret}`, secret)),
    );
    expect(message).toContain('`baseUrl`');
    expect(message).toContain('`clientSecret` is shorter than 4 characters');
    expect(message, message).not.toContain(`client_secret=${secret}`);
  });
});

describe('the 401 fix line of a refused start', () => {
  let app: TestApp | undefined;
  let emulator: TestEmulator | undefined;
  afterEach(async () => {
    await app?.close();
    await emulator?.close();
    app = undefined;
    emulator = undefined;
  });

  it('never shows the issued secret when the app swapped clientId and clientSecret (the usual cause of a 401)', async () => {
    const issuedId = 'acme-app';
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
