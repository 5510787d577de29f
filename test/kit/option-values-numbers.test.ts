/**
 * An options error quotes the value it refuses, so the operator sees what was passed. A phone
 * number put in an option by mistake (a user's, pasted from a ticket) is never repeated whole:
 * it is masked (`•• 56`) there as in every other error; values that are no number are quoted as given.
 */
import { afterAll, expect, it } from 'vitest';
import {
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

const NUMBER = '+447400123456';
const GROUPED = '+44 7400 123456';

function refusal(extra: Record<string, unknown>, action: Record<string, unknown> = {}): string {
  const options: VerificationKitOptions = {
    baseUrl: 'http://127.0.0.1:9',
    clientId: 'client-1',
    clientSecret: 'option-values-secret-9f8e7d',
    returnUrl: 'http://localhost:3000/verify/return',
    store,
    actions: [
      { name: 'grant_badge', operationSensitivity: 'normal', successPath: '/done', fulfil: () => {}, ...action },
    ],
    resolveUser: () => null,
  };
  try {
    createVerificationKit({ ...options, ...extra } as VerificationKitOptions);
  } catch (error) {
    expect(isKitError(error, KitErrorCode.InvalidOptions)).toBe(true);
    return (error as Error).message;
  }
  throw new Error('expected createVerificationKit to throw invalid_options');
}

function expectMasked(message: string): void {
  expect(message).not.toMatch(/7400\s?123456/);
  expect(message).toContain('••\u00a056');
}

it('a phone number given as defaultCountry is masked in the error', () => {
  const message = refusal({ defaultCountry: NUMBER });
  expect(message).toMatch(/^createVerificationKit: `defaultCountry` must be /);
  expectMasked(message);
});

it('a grouped number given as another option (errors, platform, an action field, a route) is masked', () => {
  expectMasked(refusal({ errors: GROUPED }));
  expectMasked(refusal({ platform: NUMBER }));
  expectMasked(refusal({}, { successPath: NUMBER }));
  expectMasked(refusal({}, { ordering: GROUPED }));
  expectMasked(refusal({ routes: { start: `/start/${NUMBER}` } }));
  expectMasked(refusal({ returnUrl: `http://localhost:3000/verify/return?to=${NUMBER}` }));
});

it('a value that is no number is still quoted as given', () => {
  expect(refusal({ defaultCountry: 'England' })).toContain('got "England"');
  expect(refusal({ errors: 'loud-2024' })).toContain('got "loud-2024"');
});

it('a phone number given as the name of an option is masked', () => {
  expectMasked(refusal({ hookTimeouts: { [NUMBER]: 1000 } }));
  expectMasked(refusal({ [GROUPED]: true }));
});
