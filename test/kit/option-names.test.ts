/**
 * A misspelt option was taken without a word and its setting lost: `hookTimeout: { fulfil: 30000 }`
 * left the default deadline, `limits: { perUserNumber }` the default budget. Every name that is
 * not an option of createVerificationKit, of its `limits`, or of createStartLimits is now refused
 * with the name it most likely meant (or the list of options), never with the client secret.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  createStartLimits,
  createVerificationKit,
  isKitError,
  KitErrorCode,
  type VerificationKitOptions,
} from '../../middleware/index.ts';
import { createSqliteStore } from '../../middleware/store/sqlite/sqlite.ts';

const store = createSqliteStore({ database: ':memory:' });
afterAll(async () => {
  await store.close();
});

const SECRET = 'option-names-secret-4c3b2a';

/** The message of the invalid_options error `build` throws (it must throw one). */
function refusal(build: () => unknown): string {
  try {
    build();
  } catch (error) {
    expect(isKitError(error, KitErrorCode.InvalidOptions)).toBe(true);
    const { message } = error as Error;
    expect(message).not.toContain(SECRET);
    return message;
  }
  throw new Error('expected the call to throw invalid_options');
}

function kitWith(extra: Record<string, unknown>): () => unknown {
  const options: VerificationKitOptions = {
    baseUrl: 'http://127.0.0.1:9',
    clientId: 'client-1',
    clientSecret: SECRET,
    returnUrl: 'http://localhost:3000/verify/return',
    store,
    actions: [{ name: 'grant_badge', operationSensitivity: 'normal', successPath: '/done', fulfil: () => {} }],
    resolveUser: () => null,
  };
  return () => createVerificationKit({ ...options, ...extra } as VerificationKitOptions);
}

describe('option names', () => {
  it('a misspelt option of createVerificationKit is refused with the one it meant', () => {
    expect(refusal(kitWith({ hookTimeout: { fulfil: 30_000 } }))).toBe(
      'createVerificationKit: "hookTimeout" is not an option: did you mean `hookTimeouts`?',
    );
    expect(refusal(kitWith({ ReturnURL: 'http://localhost:3000/verify/return' }))).toContain(
      'did you mean `returnUrl`?',
    );
  });

  it('a name like none of them is refused with the list of options', () => {
    const message = refusal(kitWith({ webhookUrl: 'https://app.example/hook' }));
    expect(message).toMatch(
      /^createVerificationKit: "webhookUrl" is not an option: the options are baseUrl, clientId, /,
    );
    expect(message).toContain('hookTimeouts, errors');
  });

  it('every problem at once: a misspelt option beside a wrong value', () => {
    const message = refusal(kitWith({ hookTimeout: {}, errors: 'loud' }));
    expect(message).toContain('"hookTimeout" is not an option');
    expect(message).toContain("`errors` must be 'render' or 'next'");
  });

  it("a misspelt budget in the kit's `limits`, and in createStartLimits, is refused with the one it meant", () => {
    const budget = { points: 3, durationSeconds: 3600 };
    expect(refusal(kitWith({ limits: { perUserNumber: budget } }))).toBe(
      'createVerificationKit: "limits.perUserNumber" is not an option: did you mean `limits.perUserNumbers`?',
    );
    expect(refusal(() => createStartLimits({ store, perIP: budget } as never))).toBe(
      'createStartLimits: "perIP" is not an option: did you mean `perIp`?',
    );
  });

  it('a name holding the client secret is refused without it', () => {
    const message = refusal(kitWith({ [SECRET]: true }));
    expect(message).toContain('is not an option');
  });

  it('the options as documented are all accepted', () => {
    expect(
      kitWith({
        hookTimeouts: { fulfil: 30_000 },
        errors: 'next',
        limits: { perIp: { points: 3, durationSeconds: 60 } },
      }),
    ).not.toThrow();
  });
});
