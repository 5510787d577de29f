/**
 * A client secret read from a file keeps its trailing newline; the kit and createVerifyClient refuse
 * it ("trim it"). The rest of the configuration holds the secret without the newline: a baseUrl
 * built from it was not seen to carry it (only the secret as given was looked for), and its
 * refusal quoted the URL whole, the secret in its path, in the sweep job's line and any log of the
 * app's start. The secret is looked for, and redacted, as given and trimmed.
 */
import { describe, expect, it } from 'vitest';
import { createVerifyClient } from '../../middleware/client/client.ts';
import { isKitError, KitError, KitErrorCode } from '../../middleware/errors.ts';
import { createVerificationKit } from '../../middleware/index.ts';

/** The message of what `build` threw (a build that throws nothing fails the test). */
function refusalOf(build: () => unknown): string {
  let refusal: unknown;
  try {
    build();
  } catch (error) {
    refusal = error;
  }
  expect(isKitError(refusal, KitErrorCode.InvalidOptions)).toBe(true);
  return (refusal as Error).message;
}

describe('a client secret read from a file, its newline kept', () => {
  it('createVerifyClient: a baseUrl whose path holds it trimmed is refused without quoting it', () => {
    const secret = 'client-file-secret-0123456789';
    const message = refusalOf(() =>
      createVerifyClient({
        baseUrl: `https://verify.example.com/${secret}`,
        clientId: 'c',
        clientSecret: `${secret}\n`,
      }),
    );
    expect(message).toContain('`baseUrl` must not carry the client secret');
    expect(message).toContain('`clientSecret` contains whitespace or control characters');
    expect(message).not.toContain(secret);
  });

  it('createVerificationKit: the same, and a later message quoting it trimmed is redacted', () => {
    const secret = 'kit-file-secret-0123456789';
    const message = refusalOf(() =>
      createVerificationKit({
        baseUrl: `https://verify.example.com/v1/${secret}`,
        clientId: 'c',
        clientSecret: `${secret}\r\n`,
      } as never),
    );
    expect(message).toContain('`baseUrl` must not carry the client secret');
    expect(message).not.toContain(secret);
    const later = new KitError(KitErrorCode.InvalidOptions, `the configuration read ${secret} from its file`);
    expect(later.message).toBe('the configuration read [redacted] from its file');
  });
});
